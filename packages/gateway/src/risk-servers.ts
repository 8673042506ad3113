import type { RiskOptions } from '@sluice/plugin-risk';
import type { UpstreamConfig } from './config-schema.js';

type RiskConfig = Exclude<RiskOptions, undefined>;
type ServerFacts = NonNullable<RiskConfig['servers']>[string];

/**
 * What the config says about each upstream's connection (transport, URL
 * without query or credentials, command line), for the risk plugin's server
 * assessment. What the operator wrote under `plugins.risk.servers` wins.
 */
export function withUpstreamFacts(risk: RiskConfig, upstreams: readonly UpstreamConfig[]): RiskConfig {
  const servers: Record<string, ServerFacts> = {};
  for (const upstream of upstreams) servers[upstream.name] = factsOf(upstream);
  for (const [name, configured] of Object.entries(risk.servers ?? {}))
    servers[name] = { ...servers[name], ...definedOnly(configured) };
  return { ...risk, servers };
}

function factsOf({ connection }: UpstreamConfig): ServerFacts {
  if (connection.type === 'stdio')
    return { transport: 'stdio', command: [connection.command, ...(connection.args ?? [])].join(' ') };
  const url = new URL(connection.url);
  return { transport: connection.type, url: `${url.origin}${url.pathname}` };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The upstreams' header and environment values, added to the risk plugin's
 * `secrets`, so that its error results and log lines never show them
 * whatever the operator remembered to list.
 */
export function withUpstreamSecrets(risk: RiskConfig, upstreams: readonly UpstreamConfig[]): RiskConfig {
  const secrets = new Set(risk.secrets ?? []);
  for (const { connection } of upstreams) {
    const values =
      connection.type === 'stdio' ? Object.values(connection.env ?? {}) : Object.values(connection.headers ?? {});
    for (const value of values) if (typeof value === 'string' && value.length > 0) secrets.add(value);
  }
  return { ...risk, secrets: [...secrets] };
}
