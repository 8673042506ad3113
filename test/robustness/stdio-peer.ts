// A raw line-level peer for a server on stdio: writes lines, reads every line
// the server writes, checks each is JSON-RPC, and hands responses to waiters by id.
import type { Writable, Readable } from 'node:stream';
import type { JsonRpcResponse } from './rpc.js';
import { isMessage, isResponse } from './rpc.js';

export class StdioPeer {
  /** Lines the server wrote that are not JSON-RPC messages. */
  readonly strayLines: string[] = [];
  private readonly waiters = new Map<string | number, (response: JsonRpcResponse) => void>();
  private buffered = '';

  constructor(
    private readonly stdin: Writable,
    stdout: Readable,
  ) {
    stdout.on('data', (chunk: Buffer) => this.read(chunk.toString()));
  }

  write(line: string): void {
    this.stdin.write(`${line}\n`);
  }

  /** Resolves with the response to `id`, or rejects after `timeoutMs`: the server hung. */
  answer(id: string | number, timeoutMs: number): Promise<JsonRpcResponse> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new Error(`no answer to id ${JSON.stringify(id)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
    });
  }

  /** Sends a request and waits for its answer. */
  request(
    id: string | number,
    method: string,
    params: Record<string, unknown>,
    timeoutMs = 20_000,
  ): Promise<JsonRpcResponse> {
    const answered = this.answer(id, timeoutMs);
    this.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answered;
  }

  private read(text: string): void {
    this.buffered += text;
    let newline = this.buffered.indexOf('\n');
    while (newline !== -1) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      this.accept(line);
      newline = this.buffered.indexOf('\n');
    }
  }

  private accept(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.strayLines.push(line.slice(0, 200));
      return;
    }
    if (!isMessage(message)) this.strayLines.push(line.slice(0, 200));
    if (!isResponse(message) || message.id === null) return;
    const waiter = this.waiters.get(message.id);
    if (!waiter) return;
    this.waiters.delete(message.id);
    waiter(message);
  }
}
