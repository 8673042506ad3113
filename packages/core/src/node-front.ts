import type http from 'node:http';
import { rpcErrorBody } from './rpc-error-body.js';

/** A request body as read: its text, or that it was larger than the limit (and was not kept). */
export type BodyRead = { readonly tooLarge: true } | { readonly tooLarge: false; readonly text: string };

/**
 * Handles one MCP request: the web-standard `Request` carries the method,
 * URL, headers and a signal that aborts when the client goes away, but no
 * body; `readBody` reads the body from the socket (once, when called).
 */
export type FrontRoute = (request: Request, readBody: () => Promise<BodyRead>) => Promise<Response>;

export interface NodeFrontOptions {
  readonly maxBodyBytes: number;
  readonly onerror: (error: Error) => void;
}

/**
 * Serves a `FrontRoute` from node:http. Unlike a generic adapter it does not
 * copy the body into the `Request` (the route reads it from the socket into
 * one buffer and parses it once, handing the SDK the parsed value), and a
 * response without a body is written without a stream.
 */
export function nodeFront(route: FrontRoute, options: NodeFrontOptions) {
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    let finished = false;
    const abort = new AbortController();
    res.on('close', () => {
      if (!finished) abort.abort();
    });
    let response: Response;
    try {
      response = await route(webRequest(req, abort.signal), () => readBody(req, options.maxBodyBytes));
    } catch (error) {
      options.onerror(error instanceof Error ? error : new Error(String(error)));
      response = new Response(rpcErrorBody(null, -32603, 'Internal server error'), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    }
    await writeResponse(response, res, abort.signal);
    finished = true;
  };
}

function webRequest(req: http.IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const host = req.headers.host ?? 'localhost';
  return new Request(`http://${host}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, signal });
}

/** Reads a body into one buffer, up to `max` bytes; past it, stops keeping what arrives. */
function readBody(req: http.IncomingMessage, max: number): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes <= max) chunks.push(chunk);
    });
    req.once('end', () => {
      resolve(
        bytes > max ? { tooLarge: true } : { tooLarge: false, text: Buffer.concat(chunks, bytes).toString('utf8') },
      );
    });
    req.once('error', reject);
  });
}

async function writeResponse(response: Response, res: http.ServerResponse, closed: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  const body = response.body;
  if (body === null) {
    res.end();
    return;
  }
  // An event stream: written as it comes, waiting for the socket to drain, until the client goes away.
  const reader = body.getReader();
  const gone = new Promise<void>((resolve) => closed.addEventListener('abort', () => resolve(), { once: true }));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), gone.then(() => undefined)]);
      if (next === undefined || next.done) break;
      if (!res.write(next.value)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), gone]);
    }
  } catch {
    // The stream failed: what was written stands, and the response ends here.
  }
  if (closed.aborted) await reader.cancel().catch(() => {});
  res.end();
}
