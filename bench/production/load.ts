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
  const send = async (body: string) => messageOf(await post(agent, url, headers, body));
  return callsOver(url, send, () => agent.destroy());
}

type Message = ReturnType<typeof messageOf>;

/** The echo tool (by the name the target lists it under: a hub prefixes the upstream's name) and its calls. */
async function callsOver(url: URL, send: (body: string) => Promise<Message>, close: () => void): Promise<Session> {
  const listed = (await send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }))) as {
    result?: { tools?: { name?: unknown }[] };
  };
  const names = (listed.result?.tools ?? []).map((t) => t.name).filter((n): n is string => typeof n === 'string');
  const tool = names.includes('echo') ? 'echo' : names.find((n) => /[^a-z]echo$/i.test(n));
  if (tool === undefined) throw new Error(`${url.href} lists no echo tool: ${names.join(', ').slice(0, 300)}`);
  const name = JSON.stringify(tool);
  let id = 2;
  return {
    async call() {
      const body = `{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":{"name":${name},"arguments":{"text":"hi"}}}`;
      const message = await send(body);
      if (message.error !== undefined || message.result?.isError || message.result?.content?.length !== 1)
        throw new Error(`not an echo result: ${JSON.stringify(message).slice(0, 300)}`);
    },
    close,
  };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'load', version: '1' } },
});

/**
 * A session over the legacy HTTP+SSE transport (a target that serves no Streamable HTTP): one event stream
 * from GET `url`, whose `endpoint` event names where messages are POSTed; answers come on the stream.
 */
export async function openSseSession(url: URL, maxSockets: number): Promise<Session> {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const waiting = new Map<number, (message: Message & { id?: unknown }) => void>();
  let endpoint: (url: URL) => void;
  const endpointKnown = new Promise<URL>((resolve) => (endpoint = resolve));
  const stream = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream' } }, resolve);
    request.on('error', reject);
  });
  if (stream.statusCode !== 200) throw new Error(`HTTP ${stream.statusCode} for the event stream`);
  let text = '';
  stream.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n')) {
      const event = text.slice(0, end).replace(/\r/g, '');
      text = text.slice(end + 2);
      const type = /^event: ?(.*)$/m.exec(event)?.[1] ?? 'message';
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (type === 'endpoint') endpoint(new URL(data, url));
      else if (type === 'message' && data !== '') {
        const message = JSON.parse(data) as Message & { id?: unknown };
        if (typeof message.id === 'number') waiting.get(message.id)?.(message);
      }
    }
  });
  const target = await endpointKnown;
  const send = async (body: string): Promise<Message> => {
    const id =
      /^\{"jsonrpc":"2.0","id":(\d+)/.exec(body)?.[1] ?? JSON.stringify((JSON.parse(body) as { id?: unknown }).id);
    const answered = new Promise<Message>((resolve) => waiting.set(Number(id), resolve));
    const accepted = await post(agent, target, {}, body);
    if (accepted.status !== 200 && accepted.status !== 202)
      throw new Error(`HTTP ${accepted.status}: ${accepted.body.slice(0, 200)}`);
    const message = await answered;
    waiting.delete(Number(id));
    return message;
  };
  await send(INITIALIZE);
  await post(agent, target, {}, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return callsOver(url, send, () => {
    stream.destroy();
    agent.destroy();
  });
}
