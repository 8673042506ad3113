// A loopback front for an upstream listener: forwards every request, after
// letting the test look at it (and answer it instead, by returning true).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Front {
  /** The upstream's endpoint, through the front. */
  readonly url: URL;
  close(): Promise<void>;
}

export async function startFront(
  target: URL,
  intercept: (req: http.IncomingMessage, res: http.ServerResponse) => boolean = () => false,
): Promise<Front> {
  const server = http.createServer((req, res) => {
    if (intercept(req, res)) return;
    const forward = http.request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(target.pathname, `http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A front that records the bearer token of every request on its way to the upstream, in order. */
export async function startRecordingFront(target: URL): Promise<Front & { readonly tokens: string[] }> {
  const tokens: string[] = [];
  const front = await startFront(target, (req) => {
    const authorization = req.headers.authorization;
    if (authorization?.startsWith('Bearer ')) tokens.push(authorization.slice(7));
    return false;
  });
  return { url: front.url, close: () => front.close(), tokens };
}
