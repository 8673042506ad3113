// Shared by the operator-approval tests: a gateway config with an operator-approved payments tool, real SDK
// clients of both protocol versions (one that says yes to every form, one that retries by hand), the admin API.
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { textOf } from '@sluice/testing';
import type { GatewayConfigInput } from '@sluice/gateway';
import { eventually, opsAndAgentKeys } from './helpers.js';

const PAYMENTS = fileURLToPath(new URL('./fixtures/payments-upstream.mjs', import.meta.url));
export const OPS_KEY = 'operator-approvals-ops-key-0123';
export const AGENT_KEY = 'operator-approvals-agent-key-012';
const agent = { authorization: `Bearer ${AGENT_KEY}` };

/** `pay_transfer` asks an operator; `pay_transfers` (how many ran) asks nobody. */
export function paymentsConfig(extra: Partial<GatewayConfigInput> = {}): GatewayConfigInput {
  return {
    listen: { http: { port: 0, auth: opsAndAgentKeys(OPS_KEY, AGENT_KEY) } },
    telemetry: { metricsPath: false },
    upstreams: [
      { name: 'pay', namespace: 'pay', connection: { type: 'stdio', command: process.execPath, args: [PAYMENTS] } },
    ],
    plugins: {
      risk: {
        ledger: { persist: 'memory' },
        approval: { secret: 'operator-approvals-secret-0123456789', operator: { holdMs: 200 } },
        tools: [
          { match: 'pay_transfer', hitl: true, approvalChannel: 'operator' },
          { match: 'pay_transfers', hitl: false },
        ],
      },
    },
    admin: { scopes: ['admin'] },
    ...extra,
  };
}

/** A client that answers every form with yes at once: the model approving its own call. */
export async function yesClient(
  url: URL,
  version: 'modern' | 'legacy',
  forms: ElicitRequestFormParams[] = [],
): Promise<Client> {
  const client = new Client(
    { name: `yes-${version}`, version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} } },
      ...(version === 'modern'
        ? { versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { maxRounds: 1_000 } }
        : {}),
    },
  );
  client.setRequestHandler('elicitation/create', (request) => {
    forms.push(request.params as ElicitRequestFormParams);
    return Promise.resolve({ action: 'accept', content: { approve: true } });
  });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: agent } }));
  return client;
}

export interface Round {
  readonly resultType?: string;
  readonly requestState?: string;
  readonly inputRequests?: Record<string, unknown>;
}

export interface ManualClient {
  send(args: Record<string, unknown>, extra?: Record<string, unknown>): Promise<Round & CallToolResult>;
  close(): Promise<void>;
}

/** A 2026-07-28 client that sees each input-required round and retries `pay_transfer` by hand, with anything it likes. */
export async function manualClient(url: URL): Promise<ManualClient> {
  const client = new Client(
    { name: 'manual', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: agent } }));
  return {
    send: async (args, extra = {}) =>
      await client.callTool({ name: 'pay_transfer', arguments: args, ...extra }, { allowInputRequired: true }),
    close: () => client.close(),
  };
}

export interface Listed {
  id: string;
  tool: string;
  via: string;
  caller?: string;
}

/** The admin API of one gateway, as the operator (or another key). */
export function adminOf(url: URL) {
  const request = async (path: string, body?: unknown, key = OPS_KEY): Promise<Response> =>
    await fetch(new URL(path, url), {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const pending = async (): Promise<Listed[]> =>
    ((await (await request('/admin/v1/approvals')).json()) as { approvals: Listed[] }).approvals;
  return {
    request,
    pending,
    /** The next operator question asked for the tool that `seen` does not hold yet, once it is listed. */
    async next(seen: Set<string>, tool = 'pay_transfer'): Promise<Listed> {
      let found: Listed | undefined;
      await eventually(async () => {
        found = (await pending()).find((a) => a.tool === tool && a.via === 'operator' && !seen.has(a.id));
        return found !== undefined;
      }, `a new operator question for ${tool}`);
      seen.add((found as Listed).id);
      return found as Listed;
    },
    /** How many times this gateway's payments upstream transferred. */
    async transfers(): Promise<number> {
      const client = new Client({ name: 'count', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: agent } }));
      try {
        return Number(textOf(await client.callTool({ name: 'pay_transfers', arguments: {} })));
      } finally {
        await client.close();
      }
    },
  };
}
