// The load side of the production benchmark: a lean MCP client over node:http keep-alive sockets, so that
// the targets, not the load, are what the numbers compare. One session per target; every call is a POST of
// a fixed tools/call body whose answer (JSON or one SSE event) is read whole and checked.
import http from 'node:http';

const PROTOCOL_VERSION = '2025-11-25';

export interface Session {
  /** One tools/call round trip; rejects unless the answer is an echo result. */
  call(): Promise<void>;
  close(): void;
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

function post(
  agent: http.Agent,
  url: URL,
  headers: Record<string, string>,
  body: string,
  retried = false,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        response.on('error', reject);
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive socket the target closed while idle: the request never reached it, so it is sent again.
      if (!retried && request.reusedSocket && error.code === 'ECONNRESET')
        resolve(post(agent, url, headers, body, true));
      else reject(error);
    });
    request.end(body);
  });
}

/** The JSON-RPC message of an answer: the body itself, or the data of its (one) SSE message event. */
function messageOf(answer: Answer): { result?: { content?: unknown[]; isError?: boolean }; error?: unknown } {
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
  const type = answer.headers['content-type'] ?? '';
  if (!type.includes('text/event-stream')) return JSON.parse(answer.body) as ReturnType<typeof messageOf>;
  const data = answer.body
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .find((line) => line.includes('"result"') || line.includes('"error"'));
  if (data === undefined) throw new Error(`no answer in the event stream: ${answer.body.slice(0, 200)}`);
  return JSON.parse(data) as ReturnType<typeof messageOf>;
}

export async function openSession(url: URL, maxSockets: number): Promise<Session> {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const init = await post(
    agent,
    url,
    {},
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'load', version: '1' } },
    }),
  );
  messageOf(init);
  const sessionId = init.headers['mcp-session-id'];
  const headers: Record<string, string> = { 'mcp-protocol-version': PROTOCOL_VERSION };
  if (typeof sessionId === 'string') headers['mcp-session-id'] = sessionId;
  await post(agent, url, headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  // The echo tool by the name the target lists it under (a hub prefixes the upstream's name).
  const listed = messageOf(
    await post(agent, url, headers, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })),
  ) as { result?: { tools?: { name?: unknown }[] } };
  const names = (listed.result?.tools ?? []).map((t) => t.name).filter((n): n is string => typeof n === 'string');
  const tool = names.includes('echo') ? 'echo' : names.find((n) => /[^a-z]echo$/i.test(n));
  if (tool === undefined) throw new Error(`${url.href} lists no echo tool: ${names.join(', ').slice(0, 300)}`);
  const name = JSON.stringify(tool);
  let id = 2;
  return {
    async call() {
      const body = `{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":{"name":${name},"arguments":{"text":"hi"}}}`;
      const message = messageOf(await post(agent, url, headers, body));
      if (message.error !== undefined || message.result?.isError || message.result?.content?.length !== 1)
        throw new Error(`not an echo result: ${JSON.stringify(message).slice(0, 300)}`);
    },
    close: () => agent.destroy(),
  };
}
