// Attackers of issue 30 over raw loopback sockets, shared by the fair-shares tests and the hostile soak:
// endless chunked uploads, held listen streams, silent sockets reopened without end.
import http from 'node:http';
import net from 'node:net';

/** What an endless uploader sends at most before the test calls the server's reading unbounded. */
export const UPLOAD_CAP = 64 * 2 ** 20;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
/**
 * `CHUNK` framed for a chunked body, built once. The uploader writes it from `drain`, straight after the event
 * loop has read what the server sent; an allocation there could start a long collection on a loaded machine,
 * after which the write fails on the server's reset before the answer already received is read.
 */
const FRAMED = Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')]);

/** The head of a JSON POST to `url`, written by hand onto a raw socket. */
export function postHead(url: URL, headers: Record<string, string>): string {
  const lines = [
    `POST ${url.pathname} HTTP/1.1`,
    `Host: ${url.host}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export interface Upload {
  /** The status line's code, or undefined when no answer came. */
  readonly status: number | undefined;
  /** Bytes of body written into the socket. */
  readonly sent: number;
  /** Whether the server closed the connection before the uploader reached its cap. */
  readonly cut: boolean;
  /** How it ended, for a failing assertion's message: the socket error (if any), bytes sent and the answer's start. */
  readonly how: string;
}

/**
 * A chunked POST that never ends by itself: body chunks are written for as
 * long as the socket takes them, up to `UPLOAD_CAP`.
 */
export function endlessUpload(url: URL, headers: Record<string, string> = {}): Promise<Upload> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let answer = '';
    let sent = 0;
    let settled = false;
    const finish = (cut: boolean, error?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      const how = `${error ? `socket error ${error.message}` : cut ? 'closed' : 'cap reached'} after ${sent} bytes sent; answer: ${JSON.stringify(answer.slice(0, 120))}`;
      resolve({ status: match ? Number(match[1]) : undefined, sent, cut, how });
    };
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', (error) => finish(true, error));
    socket.on('close', () => finish(true));
    const pump = () => {
      while (!settled && sent < UPLOAD_CAP) {
        sent += CHUNK.length;
        if (!socket.write(FRAMED)) return void socket.once('drain', pump);
      }
      if (sent >= UPLOAD_CAP) finish(false);
    };
    socket.on('connect', () => {
      socket.write(postHead(url, { 'Transfer-Encoding': 'chunked', ...headers }));
      pump();
    });
  });
}

export const LISTEN_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'subscriptions/listen',
  params: {
    notifications: { toolsListChanged: true },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'stream-holder', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

export interface HeldSocket {
  /** The status code answered, or undefined when the connection closed first. */
  readonly status: Promise<number | undefined>;
  /** Resolves when the connection closes. */
  readonly closed: Promise<void>;
  destroy(): void;
}

/** A 2026-07-28 `subscriptions/listen` over a raw socket, held open until the server or the test closes it. */
export function holdListenStream(url: URL, key: string): HeldSocket {
  const socket = net.connect(Number(url.port), url.hostname);
  let answer = '';
  let settle: (status: number | undefined) => void = () => {};
  const status = new Promise<number | undefined>((resolve) => (settle = resolve));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('latin1');
    const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
    if (match) settle(Number(match[1]));
  });
  void closed.then(() => settle(undefined));
  socket.on('connect', () => {
    const head = postHead(url, {
      'Mcp-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'subscriptions/listen',
      Authorization: `Bearer ${key}`,
      'Content-Length': String(Buffer.byteLength(LISTEN_BODY)),
    });
    socket.write(`${head}${LISTEN_BODY}`);
  });
  return { status, closed, destroy: () => socket.destroy() };
}

/**
 * Silent sockets that never send a byte, each reopened `pauseMs` after the server closes it, until stopped. The
 * pause keeps it a hoarder rather than a connect flood that fills the kernel's accept queue, which no listener
 * can answer.
 */
export function silentSockets(url: URL, count: number, pauseMs = 200) {
  const open = new Set<net.Socket>();
  let stopped = false;
  let closedByServer = 0;
  const openOne = (): void => {
    if (stopped) return;
    const socket = net.connect(Number(url.port), url.hostname);
    open.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => {
      open.delete(socket);
      if (stopped) return;
      closedByServer++;
      setTimeout(openOne, pauseMs);
    });
  };
  for (let i = 0; i < count; i++) openOne();
  return {
    closedByServer: () => closedByServer,
    stop: () => {
      stopped = true;
      for (const socket of open) socket.destroy();
    },
  };
}

/** An answer read whole (its first 256 KiB): status, headers and body. */
export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One request on a connection of its own from `localAddress` (any 127.x.y.z): the whole answer. */
export function requestFrom(
  url: URL,
  localAddress: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: init.method ?? 'GET', localAddress, agent: false, headers: init.headers ?? {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < 256 * 1024) body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A POST of `initialize` with `Bearer key` from `localAddress` (any 127.x.y.z): the whole answer. */
export function initializeWithKey(url: URL, key: string, localAddress: string): Promise<Answer> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'guesser', version: '1' } },
  });
  return requestFrom(url, localAddress, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body,
  });
}

/** A POST of `initialize` with `Bearer key` from `localAddress` (any 127.x.y.z): the status code answered. */
export async function postWithKey(url: URL, key: string, localAddress: string): Promise<number> {
  return (await initializeWithKey(url, key, localAddress)).status;
}
