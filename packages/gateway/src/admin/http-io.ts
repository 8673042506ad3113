import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request body larger than this is refused: admin requests are a server and a tool name. */
export const MAX_ADMIN_BODY_BYTES = 16 * 1024;

/** A request the admin surface refuses, with its status. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads a request body up to `MAX_ADMIN_BODY_BYTES`; a larger one is a 413. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_ADMIN_BODY_BYTES) throw new HttpProblem(413, `the body is over ${MAX_ADMIN_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ADMIN_BODY_BYTES) throw new HttpProblem(413, `the body is over ${MAX_ADMIN_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The fields of a JSON object or a form body (`application/x-www-form-urlencoded`). */
export function fieldsOf(body: string, contentType: string | undefined): Record<string, unknown> {
  if (contentType?.startsWith('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(body));
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new HttpProblem(400, 'the body must be JSON: { "server": "...", "tool": "..." }');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new HttpProblem(400, 'the body must be a JSON object: { "server": "...", "tool": "..." }');
  return parsed as Record<string, unknown>;
}

/** The `server` and `tool` a request's fields name. */
export function toolOf(fields: Record<string, unknown>): { server: string; tool: string } {
  const server = fields.server;
  const tool = fields.tool;
  if (typeof server !== 'string' || typeof tool !== 'string' || server === '' || tool === '')
    throw new HttpProblem(400, 'name the tool by "server" (the upstream) and "tool" (its name there)');
  return { server, tool };
}

/** A string field of a form, or undefined. */
export function stringField(fields: Record<string, unknown>, name: string): string | undefined {
  const value = Object.hasOwn(fields, name) ? fields[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** Only these methods; anything else is a 405 naming them. */
export function allow(req: IncomingMessage, methods: readonly string[]): void {
  if (!methods.includes(req.method ?? 'GET')) throw new HttpProblem(405, `use ${methods.join(' or ')}`);
}
