// Real SDK clients for the approval tests: 2025-11-25 in-memory or over HTTP, 2026-07-28 over loopback HTTP.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterEach } from 'vitest';
import { createServer } from '@sluice/core';
import type { AuditOptions, CallToolResult, SluiceServer, Store } from '@sluice/core';
import { FakeClock, captureLogger } from '@sluice/testing';
import type { CapturedLogger } from '@sluice/testing';
import type { RiskOptions, RiskPlugin } from '@sluice/plugin-risk';
import { risk } from '@sluice/plugin-risk';

/** Closes what the returned `track` was given, after each test of the file, last opened first. */
export function closeAfterEach(): <T extends { close(): Promise<unknown> }>(thing: T) => T {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}

/** What a person does with the form; `hang` never answers. */
export type Answer = ElicitResult | 'hang';
export type Person = (form: ElicitRequestFormParams) => Answer | Promise<Answer>;

export const yes: Person = () => ({ action: 'accept', content: { approve: true } });
export const no: Person = () => ({ action: 'decline' });

export interface ApprovalServer {
  readonly server: SluiceServer;
  readonly logs: CapturedLogger;
  readonly clock: FakeClock;
  readonly plugin: RiskPlugin;
  /** How many times the gated tool's handler ran. */
  runs(): number;
  close(): Promise<void>;
}

/** A Sluice server whose local tool `deploy` asks a person first (and `status` does not); `audit`: its log's options. */
export async function approvalServer(
  options: RiskOptions = {},
  store?: Store,
  audit?: AuditOptions,
  /** The server's clock; give a store made with it its own clock too. */
  clock = new FakeClock(Date.now()),
): Promise<ApprovalServer> {
  const logs = captureLogger();
  const plugin = risk({ ledger: { persist: 'memory' }, ...options });
  const server = createServer({
    name: 'approvals',
    version: '1.0.0',
    plugins: [plugin],
    logger: logs.logger,
    clock,
    ...(store ? { store } : {}),
    ...(audit ? { audit } : {}),
  });
  let runs = 0;
  server.tool({
    name: 'deploy',
    description: 'Deploys a service to an environment.',
    inputSchema: {
      type: 'object',
      properties: { env: { type: 'string' }, note: { type: 'string' } },
      required: ['env'],
    },
    policy: { risk: { hitl: true } },
    handler: (args) => {
      runs++;
      return { content: [{ type: 'text', text: `deployed to ${String(args.env)}` }] };
    },
  });
  server.tool({
    name: 'status',
    description: 'Says whether the service is up.',
    handler: () => ({ content: [{ type: 'text', text: 'up' }] }),
  });
  await server.ready();
  return { server, logs, clock, plugin, runs: () => runs, close: () => server.close() };
}

function answering(client: Client, person: Person, forms: ElicitRequestFormParams[]): void {
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as ElicitRequestFormParams;
    forms.push(params);
    const answer = await person(params);
    return answer === 'hang' ? new Promise<never>(() => {}) : answer;
  });
}

export interface Connected {
  readonly client: Client;
  /** Every form the person was shown. */
  readonly forms: ElicitRequestFormParams[];
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

function connected(client: Client, forms: ElicitRequestFormParams[]): Connected {
  return {
    client,
    forms,
    call: async (name, args = {}) => await client.callTool({ name, arguments: args }),
    close: () => client.close(),
  };
}

/** A 2025-11-25 client in-process; `elicitation: false` declares no elicitation capability. */
export async function legacyClient(
  server: SluiceServer,
  person: Person,
  options: { elicitation?: boolean } = {},
): Promise<Connected> {
  const forms: ElicitRequestFormParams[] = [];
  const client = new Client(
    { name: 'legacy', version: '1.0.0' },
    { capabilities: options.elicitation === false ? {} : { elicitation: { form: {} } } },
  );
  if (options.elicitation !== false) answering(client, person, forms);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return connected(client, forms);
}

/** A 2025-11-25 client over HTTP (the core gives it a session, so elicitation reaches it). */
export async function legacyHttpClient(url: URL, person: Person): Promise<Connected> {
  const forms: ElicitRequestFormParams[] = [];
  const client = new Client({ name: 'legacy-http', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  answering(client, person, forms);
  await client.connect(new StreamableHTTPClientTransport(url));
  return connected(client, forms);
}

/** A 2026-07-28 client over HTTP that fulfils input-required rounds through its elicitation handler. */
export async function modernClient(
  url: URL,
  person: Person,
  options: { elicitation?: boolean } = {},
): Promise<Connected> {
  const forms: ElicitRequestFormParams[] = [];
  const client = new Client(
    { name: 'modern', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: options.elicitation === false ? {} : { elicitation: { form: {} } },
    },
  );
  if (options.elicitation !== false) answering(client, person, forms);
  await client.connect(new StreamableHTTPClientTransport(url));
  return connected(client, forms);
}

/** What the first round of a gated 2026-07-28 call answers. */
export interface InputRequiredAnswer {
  readonly resultType: 'input_required';
  readonly inputRequests: Record<string, { method: string; params: ElicitRequestFormParams }>;
  readonly requestState: string;
}

/** A 2026-07-28 client in manual mode: it sees the input-required answer and retries by hand. */
export interface ManualClient {
  first(name: string, args: Record<string, unknown>): Promise<InputRequiredAnswer>;
  retry(
    name: string,
    args: Record<string, unknown>,
    requestState: string | undefined,
    response: unknown,
  ): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** `key`: the API key it calls with (`Authorization: Bearer`), when the listener asks for one. */
export async function manualClient(url: URL, key?: string): Promise<ManualClient> {
  const client = new Client(
    { name: 'manual', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  const headers = key === undefined ? undefined : { authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(url, headers ? { requestInit: { headers } } : {}));
  const send = (params: Record<string, unknown>) =>
    client.callTool(params as never, { allowInputRequired: true }) as Promise<unknown>;
  return {
    first: async (name, args) => (await send({ name, arguments: args })) as InputRequiredAnswer,
    retry: async (name, args, requestState, response) =>
      (await send({
        name,
        arguments: args,
        inputResponses: { sluice_approval: response },
        ...(requestState === undefined ? {} : { requestState }),
      })) as CallToolResult,
    close: () => client.close(),
  };
}

export const accept = { action: 'accept', content: { approve: true } } as const;
