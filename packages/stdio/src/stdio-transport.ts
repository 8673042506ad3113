import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { asJsonRpcMessage, rpcErrorBody } from '@sluice/core/internal';

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/**
 * Newline-delimited JSON-RPC over a pair of streams. Unlike a transport that
 * drops what it cannot read, it answers: a line that is not JSON gets a parse
 * error, and a request that breaks the message schema gets an invalid-request
 * error under its own id, so a client never waits for an answer that will
 * not come.
 */
/** What the transport needs of the SDK's server package, which the caller has loaded. */
export type StdioSdk = Pick<
  typeof import('@modelcontextprotocol/server'),
  'STDIO_DEFAULT_MAX_BUFFER_SIZE' | 'parseJSONRPCMessage' | 'serializeMessage'
>;

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer: Buffer | undefined;
  /** Set after an oversized line was refused: input is thrown away up to its end. */
  private discarding = false;
  private started = false;
  private closed = false;

  private readonly maxLineBytes: number;

  constructor(
    private readonly sdk: StdioSdk,
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    maxLineBytes?: number,
  ) {
    this.maxLineBytes = maxLineBytes ?? sdk.STDIO_DEFAULT_MAX_BUFFER_SIZE;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- a second start() must reject, as the Transport contract expects, not throw
  async start(): Promise<void> {
    if (this.started) throw new Error('StdioLineTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
    this.input.on('end', this.onEnd);
    this.input.on('close', this.onEnd);
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.discarding) {
      const end = chunk.indexOf(0x0a);
      if (end === -1) return;
      this.discarding = false;
      chunk = chunk.subarray(end + 1);
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline === -1) break;
      const end = newline > 0 && this.buffer[newline - 1] === 0x0d ? newline - 1 : newline;
      const line = this.buffer.toString('utf8', 0, end);
      this.buffer = this.buffer.subarray(newline + 1);
      if (line.trim().length > 0) this.receive(line);
    }
    if (this.buffer.length > this.maxLineBytes) {
      // The rest of that line, when it comes, is part of the refused message, not a new one.
      this.buffer = undefined;
      this.discarding = true;
      this.reply(null, INVALID_REQUEST, `Message longer than ${this.maxLineBytes} bytes`);
    }
  };

  private receive(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reply(null, PARSE_ERROR, 'Parse error: the line is not JSON');
      return;
    }
    let message: JSONRPCMessage;
    try {
      // The envelope only; each method's params are parsed where the SDK dispatches it.
      message = asJsonRpcMessage(value, this.sdk.parseJSONRPCMessage);
    } catch (error) {
      const id = (value as { id?: unknown } | null)?.id;
      const isRequest = typeof (value as { method?: unknown } | null)?.method === 'string';
      if (isRequest && (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) {
        this.reply(id, INVALID_REQUEST, 'Invalid request: the message does not match the JSON-RPC schema of MCP');
      } else {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
      return;
    }
    this.onmessage?.(message);
  }

  private reply(id: string | number | null, code: number, message: string): void {
    void this.write(`${rpcErrorBody(id, code, message)}\n`).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onEnd = (): void => {
    void this.close();
  };

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('StdioLineTransport is closed'));
    return this.write(this.sdk.serializeMessage(message));
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const flushed = this.output.write(text, (error) => (error ? reject(error) : undefined));
      if (flushed) resolve();
      else this.output.once('drain', () => resolve());
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Transport contract's close() is async; callers await it
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.buffer = undefined;
    this.onclose?.();
  }
}
