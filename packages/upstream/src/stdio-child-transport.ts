import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import {
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  SdkError,
  SdkErrorCode,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { asJsonRpcMessage } from '@sluice/core/internal';

export interface StdioChildOptions {
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the SDK's default inherited environment (HOME, PATH, ...), as the SDK's own stdio transport does. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The longest line read from the child; a longer one is an error and closes the connection. */
  readonly maxMessageBytes?: number;
}

/** The request option (a header, as Sluice's HTTP transport takes its budgets) naming the call a `tools/call` serves. */
const CALL_HEADER = 'x-sluice-call';

/** How long close() waits for the child after ending its stdin, then after SIGTERM, before SIGKILL. */
const GRACE_MS = 2_000;
const NEWLINE = 0x0a;

/**
 * The upstream side of a stdio connection: spawns the command and speaks
 * newline-delimited JSON-RPC over its stdin and stdout. Lines are cut from
 * each chunk as they come (a partial line is the only thing kept between
 * chunks), parsed once, and checked at the envelope only (asJsonRpcMessage);
 * params and results are checked per method by the client, as over HTTP.
 * A line that is not JSON is skipped, a message that is not JSON-RPC is an
 * error, a line over the size limit is an error that closes the connection
 * (the SDK's stdio transport behaves the same way). The child's stderr is
 * offered as a stream before start, so that nothing it writes early is lost.
 */
export class StdioChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The child's stderr, piped; readable before start(). */
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  /** The start of a line whose end has not come yet. */
  private partial: Buffer | undefined;
  private readonly maxBytes: number;
  /** The calls `carry` was given, by the key their requests carry, and the id of each one's `tools/call` once sent. */
  private readonly calls = new Map<string, { readonly end: () => void; id?: number }>();
  private nextCall = 0;
  /**
   * How each call in flight ends, by its `tools/call` request's id as a number (the client matches an answer to its
   * request by `Number(id)`, so an answer whose id is `"4"` answers request 4): ended as its answer is read.
   */
  private readonly answerEnds = new Map<number, () => void>();

  constructor(private readonly options: StdioChildOptions) {
    this.maxBytes = options.maxMessageBytes ?? STDIO_DEFAULT_MAX_BUFFER_SIZE;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('StdioChildTransport already started'));
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, this.options.args ?? [], {
        env: { ...getDefaultEnvironment(), ...this.options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
        ...(this.options.cwd === undefined ? {} : { cwd: this.options.cwd }),
      });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        if (this.child === child) this.child = undefined;
        this.partial = undefined;
        this.onclose?.();
      });
      child.stdin.on('error', this.fail);
      child.stdout.on('error', this.fail);
      child.stdout.on('data', this.onData);
      child.stderr.pipe(this.stderr);
    });
  }

  private readonly fail = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onData = (chunk: Buffer): void => {
    let from = 0;
    let newline = chunk.indexOf(NEWLINE);
    if (this.partial !== undefined && newline !== -1) {
      // The line that began in an earlier chunk ends in this one.
      const line = Buffer.concat([this.partial, chunk.subarray(0, newline)]);
      this.partial = undefined;
      if (line.length > this.maxBytes) {
        this.tooLong();
        return;
      }
      this.receive(line, 0, line.length);
      from = newline + 1;
      newline = chunk.indexOf(NEWLINE, from);
    }
    while (newline !== -1) {
      if (newline - from > this.maxBytes) {
        this.tooLong();
        return;
      }
      this.receive(chunk, from, newline);
      from = newline + 1;
      newline = chunk.indexOf(NEWLINE, from);
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      this.partial = this.partial === undefined ? rest : Buffer.concat([this.partial, rest]);
      if (this.partial.length > this.maxBytes) this.tooLong();
    }
  };

  private tooLong(): void {
    this.partial = undefined;
    this.onerror?.(new Error(`The upstream wrote a line longer than ${this.maxBytes} bytes`));
    void this.close();
  }

  private receive(bytes: Buffer, from: number, to: number): void {
    // A line may end in \r\n.
    if (to > from && bytes[to - 1] === 0x0d) to--;
    if (to === from) return;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8', from, to));
    } catch {
      // Not JSON (a stray log line): skipped, as the SDK's stdio transport does.
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = asJsonRpcMessage(value, parseJSONRPCMessage);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    // A call's answer ends the call: what the child wrote after it is not the call's. The client runs the handler
    // of a notification or a request one microtask after the message is handed to it; the call ends one microtask
    // after its answer is, so each handler sees the call as it stood where its message came: in flight for a line
    // or a question written before the answer, over for one written after it, even when one read holds both.
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      const id = Number(message.id);
      const end = this.answerEnds.get(id);
      if (end !== undefined) {
        this.answerEnds.delete(id);
        queueMicrotask(end);
      }
    }
    this.onmessage?.(message);
  }

  /**
   * Request options (`headers`, which the client hands to `send`) that tie
   * the `tools/call` sent with them to a call: `end` is called as its answer
   * is read (see `receive`), and stands for the relay's end of the call.
   * `release` them once the call has ended, answered or not.
   */
  carry(end: () => void): Readonly<Record<string, string>> {
    const key = String(this.nextCall++);
    this.calls.set(key, { end });
    return { [CALL_HEADER]: key };
  }

  release(headers: Readonly<Record<string, string>>): void {
    const key = headers[CALL_HEADER];
    const call = key === undefined ? undefined : this.calls.get(key);
    if (key === undefined || call === undefined) return;
    this.calls.delete(key);
    if (call.id !== undefined) this.answerEnds.delete(call.id);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
    const key = options?.headers?.[CALL_HEADER];
    if (key !== undefined && 'method' in message && message.method === 'tools/call' && 'id' in message) {
      // The first tools/call of the call only: it is the one the call waits on.
      const call = this.calls.get(key);
      if (call !== undefined && call.id === undefined) {
        call.id = Number(message.id);
        this.answerEnds.set(call.id, call.end);
      }
    }
    const line = `${JSON.stringify(message)}\n`;
    return new Promise((resolve) => {
      if (stdin.write(line)) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the child's stdin, then signals it (SIGTERM, then SIGKILL) if it has not exited in time. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.partial = undefined;
    this.answerEnds.clear();
    this.calls.clear();
    if (!child) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const waitOr = () => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, GRACE_MS).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // Already gone.
    }
    await waitOr();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await waitOr();
    }
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
