// Starts services of the mesh tests as separate processes (test/fixtures/service.ts) and
// drives them over loopback HTTP with the SDK's real client.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, SkippedTool } from '@sluice/core';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';

const FIXTURE = fileURLToPath(new URL('./fixtures/service.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

interface Event {
  readonly event: string;
  readonly [field: string]: unknown;
}

export interface ImportedEvent extends Event {
  readonly imported: string[];
  readonly skipped: SkippedTool[];
}

/** One service process, its MCP endpoint, and a client connected to it. */
export class ServiceProcess {
  private readonly events: Event[] = [];
  private readonly waiting: ((event: Event) => void)[] = [];
  /** Every JSON log line the service wrote on stderr. */
  readonly logs: Record<string, unknown>[] = [];
  url = '';
  client: Client | undefined;

  private constructor(
    readonly prefix: string,
    readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.onEvent(JSON.parse(line) as Event));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      try {
        this.logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        this.logs.push({ text: line });
      }
    });
  }

  /** Spawns the service and waits until it listens. */
  static async start(prefix: string, guard?: LoopGuardOptions): Promise<ServiceProcess> {
    const child = spawn(
      process.execPath,
      ['--conditions=sluice:source', '--import', 'tsx', FIXTURE, JSON.stringify({ prefix, guard })],
      {
        cwd: PACKAGE_DIR,
        env: { ...process.env, SLUICE_LOG_LEVEL: 'info' },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const service = new ServiceProcess(prefix, child);
    const ready = await service.next();
    if (ready.event !== 'ready')
      throw new Error(`${prefix} did not start: ${JSON.stringify(ready)} ${JSON.stringify(service.logs)}`);
    service.url = String(ready.url);
    service.client = new Client({ name: 'mesh-test', version: '1.0.0' });
    await service.client.connect(new StreamableHTTPClientTransport(new URL(service.url)));
    return service;
  }

  /** Makes this service import `upstream` over HTTP, and returns what the import reported. */
  async import(upstream: ServiceProcess): Promise<ImportedEvent> {
    this.child.stdin!.write(`${JSON.stringify({ op: 'import', name: upstream.prefix, url: upstream.url })}\n`);
    const event = await this.next();
    if (event.event !== 'imported')
      throw new Error(`${this.prefix} failed to import ${upstream.prefix}: ${JSON.stringify(event)}`);
    return event as ImportedEvent;
  }

  call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    return this.client!.callTool({ name, arguments: args });
  }

  async toolNames(): Promise<string[]> {
    return (await this.client!.listTools()).tools.map((t) => t.name).sort();
  }

  logEvents(name: string): Record<string, unknown>[] {
    return this.logs.filter((record) => record.event === name);
  }

  /** The log records of `name`, once there are `count` of them (the service's logger writes asynchronously). */
  async waitForLogs(name: string, count = 1): Promise<Record<string, unknown>[]> {
    const deadline = Date.now() + 10_000;
    while (this.logEvents(name).length < count) {
      if (Date.now() > deadline)
        throw new Error(`${this.prefix} never logged ${count} "${name}": ${JSON.stringify(this.logs.slice(-5))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.logEvents(name);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends stdin, which makes the service close and exit; kills it if it does not within 5 s. */
  async stop(): Promise<void> {
    await this.client?.close().catch(() => {});
    if (!this.running) return;
    const exited = once(this.child, 'exit');
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private onEvent(event: Event): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter(event);
    else this.events.push(event);
  }

  private next(): Promise<Event> {
    const queued = this.events.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`${this.prefix} exited (${code}): ${JSON.stringify(this.logs.slice(-5))}`));
      this.child.once('exit', onExit);
      this.waiting.push((event) => {
        this.child.off('exit', onExit);
        resolve(event);
      });
    });
  }
}
