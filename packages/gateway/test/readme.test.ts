import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { GatewayMetrics, gatewayJsonSchema, interpolateEnv, parseGatewayConfig } from '@sluice/gateway';
import { haproxyConfig } from './fleet/harness.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The first-column names of the table under a heading. */
function tableNames(heading: string): string[] {
  const section = README.slice(README.indexOf(heading));
  const table = section.slice(section.indexOf('\n|'));
  const rows =
    table
      .split('\n\n')[0]
      ?.split('\n')
      .filter((line) => line.startsWith('| `')) ?? [];
  return rows.map((row) => /^\| `([^`]+)`/.exec(row)?.[1] as string);
}

type Schema = Record<string, unknown>;

/** Every field path of the config schema (`upstreams[].connection.url`); plugin options belong to the plugins' READMEs. */
function schemaPaths(schema: Schema, prefix = '', out = new Set<string>()): Set<string> {
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const branch of (schema[key] as Schema[] | undefined) ?? []) schemaPaths(branch, prefix, out);
  if (schema.items) schemaPaths(schema.items as Schema, `${prefix}[]`, out);
  for (const [key, value] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.add(path);
    if (!path.startsWith('plugins.')) schemaPaths(value, path, out);
  }
  return out;
}

describe('the README', () => {
  it('has a row for every field of the config schema, and none for a field it does not have', () => {
    expect(tableNames('### Reference').sort()).toEqual([...schemaPaths(gatewayJsonSchema())].sort());
  });

  it('lists exactly the metric families the gateway serves', () => {
    const metrics = new GatewayMetrics();
    metrics.watchUpstreams(() => []);
    metrics.watchShares(() => undefined);
    metrics.watchScripts(() => ({
      running: 0,
      callers: 0,
      maxConcurrentScripts: 4,
      maxScriptsPerCaller: 2,
      cpuSharePerCaller: 0.25,
      cpuChargedMs: 0,
      refused: { caller: 0, server: 0, cpu: 0 },
    }));
    const served = [...metrics.render().matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    expect(tableNames('## Metrics').sort()).toEqual(served.sort());
  });
});

describe('the README on running many replicas', () => {
  it('shows the HAProxy config the fleet tests generate', () => {
    const config = haproxyConfig(8080, [
      { name: 'a', port: 3001 },
      { name: 'b', port: 3002 },
      { name: 'c', port: 3003 },
    ]);
    expect(README).toContain(`\`\`\`\n${config}\`\`\``);
  });

  it('shows a replica config that is valid once its variables are set', () => {
    const section = README.slice(README.indexOf('## Running many replicas'));
    const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
    const env = { SLUICE_APPROVAL_KEY: 'k'.repeat(32), REDIS_URL: 'redis://10.0.0.5:6379' };
    const config = parseGatewayConfig(interpolateEnv(JSON.parse(block ?? ''), env));
    expect(config.store).toMatchObject({ redis: 'redis://10.0.0.5:6379', keyPrefix: 'fleet:' });
  });
});
