import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '@sluice/core';
import { GATEWAY_SCHEMA_ID, gatewayJsonSchema, interpolateEnv, main, parseGatewayConfig } from '@sluice/gateway';

/** A config as written, with `${VAR}` references where numbers, booleans and enums go. */
const WRITTEN = {
  listen: { http: { port: '${SLUICE_PORT:-3000}' } },
  logLevel: '${LOG_LEVEL:-info}',
  drainTimeoutMs: '${DRAIN_MS}',
  telemetry: { tracing: '${TRACING:-true}' },
  plugins: { concurrency: { default: { maxActive: '${MAX_ACTIVE:-8}', maxQueue: 16 } } },
};

function validator() {
  // The validator knows its own dialect; the schema without `$schema` is checked under it.
  const body: Record<string, unknown> = { ...gatewayJsonSchema() };
  delete body.$schema;
  return compileSchema(body, 'input', 'sluice-config');
}

describe('the config JSON Schema', () => {
  it('has an $id and a title, beside the dialect', () => {
    expect(gatewayJsonSchema()).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: GATEWAY_SCHEMA_ID,
      title: 'Sluice gateway config',
    });
  });

  it('accepts ${VAR} references where numbers, booleans and enumerated strings go', async () => {
    expect(await validator().validate(WRITTEN)).toMatchObject({ ok: true });
  });

  it('still rejects a number field holding text that is no reference', async () => {
    const bad = { listen: { http: { port: 'three thousand' } } };
    expect(await validator().validate(bad)).toMatchObject({ ok: false });
  });
});

/** The path of every property in a JSON Schema that has no description, as `a.b[].c` (`*` for record values). */
function undescribed(node: unknown, path = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((child) => undescribed(child, path));
  if (typeof node !== 'object' || node === null) return [];
  const schema = node as Record<string, unknown>;
  const found: string[] = [];
  for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    if (typeof child.description !== 'string' || child.description.length === 0) found.push(`${path}.${name}`);
    found.push(...undescribed(child, `${path}.${name}`));
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) found.push(...undescribed(schema[key], path));
  found.push(...undescribed(schema.items, `${path}[]`));
  found.push(...undescribed(schema.additionalProperties, `${path}.*`));
  return found;
}

describe('descriptions in the config JSON Schema', () => {
  it('describe every field, so an editor can explain each one', () => {
    expect(undescribed(gatewayJsonSchema())).toEqual([]);
  });

  it('are looked for in nested objects, arrays and records alike', () => {
    const schema = {
      properties: {
        a: { description: 'described', properties: { b: { type: 'string' } } },
        list: { description: 'described', items: { properties: { c: { type: 'number' } } } },
        map: { description: 'described', additionalProperties: { anyOf: [{ properties: { d: {} } }] } },
      },
    };
    expect(undescribed(schema)).toEqual(['.a.b', '.list[].c', '.map.*.d']);
  });
});

describe('numbers and booleans from ${VAR}', () => {
  it('are converted where the config schema wants them, after substitution', () => {
    const config = parseGatewayConfig(interpolateEnv(WRITTEN, { DRAIN_MS: '2500', TRACING: 'false', MAX_ACTIVE: '4' }));
    expect(config.listen.http?.port).toBe(3000);
    expect(config.drainTimeoutMs).toBe(2500);
    expect(config.telemetry.tracing).toBe(false);
    expect(config.logLevel).toBe('info');
    expect(config.plugins.concurrency?.default?.maxActive).toBe(4);
  });

  it('are refused, naming the field, when the variable holds no number', () => {
    expect(() => parseGatewayConfig(interpolateEnv(WRITTEN, { DRAIN_MS: 'soon' }))).toThrow(/drainTimeoutMs/);
  });
});

describe('sluice schema --out', () => {
  it('writes the schema to the file, ready for a config to name in "$schema"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-schema-'));
    try {
      const file = join(dir, 'sluice.schema.json');
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await main(['schema', '--out', file], { stdout, stderr: new PassThrough(), env: {} })).toBe(0);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(gatewayJsonSchema());
      expect(out).toContain(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('config.schema.json', () => {
  // After a schema change: node --conditions=sluice:source --import tsx src/cli.ts schema --out config.schema.json
  it('is the schema sluice schema prints, so the copy the package ships is current', () => {
    const shipped = JSON.parse(readFileSync(new URL('../config.schema.json', import.meta.url), 'utf8')) as unknown;
    expect(shipped).toEqual(gatewayJsonSchema());
  });
});
