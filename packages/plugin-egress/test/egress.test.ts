import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallToolResult, SluiceTool, ToolDraft, ToolSource } from '@sluice/core';
import { CoreErrorCode, MetaKey, SluiceError, Stage, createServer, definePlugin } from '@sluice/core';
import { TestServer, captureLogger, createTestKit, metaOf, textOf } from '@sluice/testing';
import { UPSTREAM_READ_FACTOR, egress, interventionText } from '@sluice/plugin-egress';
import type { EgressRecord } from '@sluice/plugin-egress';
import { oracleSize } from './oracle.js';

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

function constructionError(run: () => unknown): SluiceError {
  try {
    run();
  } catch (error) {
    if (SluiceError.is(error)) return error;
    throw error;
  }
  throw new Error('expected construction to throw');
}

describe('egress() options', () => {
  it('throws at construction for a limit under 1,024 bytes, naming the field', () => {
    const error = constructionError(() => egress({ maxPayloadBytes: 1_023 }));
    expect(error.code).toBe(CoreErrorCode.INVALID_OPTIONS);
    expect(error.message).toMatch(/maxPayloadBytes/);
    expect(constructionError(() => egress({ tools: { 'db.*': { maxPayloadBytes: 10 } } })).message).toMatch(
      /tools\.db\.\*\.maxPayloadBytes/,
    );
    expect(constructionError(() => egress({ maxPayloadBytes: 2_048.5 })).message).toMatch(/maxPayloadBytes/);
    expect(constructionError(() => egress({ tools: { 'bad pattern!': { maxPayloadBytes: 2_048 } } })).message).toMatch(
      /tools/,
    );
    expect(constructionError(() => egress({ maxPayloadBytes: 2_048, limit: 5 } as never)).message).toMatch(/limit/);
    expect(egress({ maxPayloadBytes: 1_024 }).name).toBe('egress');
  });
});

describe('a result within the limit', () => {
  it('comes back as the very same object when it is exactly at the limit, and is cut one byte over', async () => {
    const limit = 2_048;
    const skeleton = oracleSize(text(''));
    const atLimit = text('a'.repeat(limit - skeleton - 2) + 'é');
    const overLimit = text('a'.repeat(limit - skeleton - 1) + 'é');
    expect(oracleSize(atLimit)).toBe(limit);
    const server = createServer({
      name: 's',
      version: '1',
      logger: captureLogger().logger,
      plugins: [egress({ maxPayloadBytes: limit })],
    });
    let next = atLimit;
    server.tool({ name: 'exact', handler: () => next });
    expect(await server.call('exact')).toBe(atLimit);
    next = overLimit;
    const cut = await server.call('exact');
    expect(cut).not.toBe(overLimit);
    expect(textOf(cut)).toContain(interventionText(limit));
    expect(oracleSize(cut)).toBeLessThanOrEqual(limit);
    await server.close();
  });

  it('leaves tools that no rule limits alone', async () => {
    const big = text('z'.repeat(50_000));
    const server = createServer({
      name: 's',
      version: '1',
      logger: captureLogger().logger,
      plugins: [egress({ tools: { 'db_*': { maxPayloadBytes: 4_096 } } })],
    });
    server.tool({ name: 'files_read', handler: () => big });
    server.tool({ name: 'db_query', handler: () => big });
    expect(await server.call('files_read')).toBe(big);
    expect(oracleSize(await server.call('db_query'))).toBeLessThanOrEqual(4_096);
    await server.close();
  });
});

describe('over the limit, through a real client', () => {
  it('truncates, appends the intervention, records the sizes, keeps nextTool, and logs egress.truncated', async () => {
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 4_096 })],
      tools: [
        {
          name: 'logs_search',
          handler: () => ({
            content: [{ type: 'text' as const, text: 'log line\n'.repeat(2_000) }],
            _meta: {
              [MetaKey.NEXT_TOOL]: { name: 'logs_search', arguments: { offset: 100 } },
              nextTool: 'logs_search',
              'openai/nextTool': 'logs_search',
            },
          }),
        },
      ],
    });
    const result = await kit.call('logs_search');
    expect(textOf(result).endsWith(interventionText(4_096))).toBe(true);
    expect(textOf(result).startsWith('log line\nlog line\n')).toBe(true);
    expect(oracleSize(result)).toBeLessThanOrEqual(4_096);
    const record = metaOf<EgressRecord>(result, MetaKey.EGRESS);
    expect(record).toEqual({
      originalBytes: expect.any(Number) as unknown,
      keptBytes: expect.any(Number) as unknown,
      limitBytes: 4_096,
    });
    expect(record!.originalBytes).toBeGreaterThan(18_000);
    expect(record!.keptBytes).toBeLessThan(4_096);
    expect(metaOf(result, MetaKey.NEXT_TOOL)).toEqual({ name: 'logs_search', arguments: { offset: 100 } });
    expect(metaOf(result, 'nextTool')).toBe('logs_search');
    expect(metaOf(result, 'openai/nextTool')).toBe('logs_search');
    const [event] = kit.logs.events('egress.truncated');
    expect(event).toMatchObject({
      tool: 'logs_search',
      originalBytes: record!.originalBytes,
      keptBytes: record!.keptBytes,
      limitBytes: 4_096,
    });
    await kit.close();
  });

  it('truncates a result with several blocks and structuredContent, in block order', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 2_048 })],
      tools: [
        {
          name: 'rows',
          handler: () => ({
            content: [
              { type: 'text' as const, text: 'Rows follow.' },
              { type: 'text' as const, text: JSON.stringify(rows) },
              { type: 'resource' as const, resource: { uri: 'file:///rows.json', text: JSON.stringify(rows) } },
            ],
            structuredContent: { rows },
          }),
        },
      ],
    });
    const result = await kit.call('rows');
    expect(result.content).toHaveLength(3);
    expect(result.content[0]).toEqual({ type: 'text', text: 'Rows follow.' });
    expect(JSON.stringify(rows).startsWith((result.content[1] as { text: string }).text)).toBe(true);
    expect(result.content[2]).toEqual({ type: 'text', text: interventionText(2_048) });
    expect(result.structuredContent).toBeUndefined();
    expect(oracleSize(result)).toBeLessThanOrEqual(2_048);
    await kit.close();
  });

  it('refuses with PAYLOAD_TOO_LARGE when an outputSchema tool returns structuredContent over the limit', async () => {
    const outputSchema = z.object({ rows: z.array(z.object({ id: z.number() })) });
    const rows = Array.from({ length: 1_000 }, (_, i) => ({ id: i }));
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 2_048 })],
      tools: [
        {
          name: 'typed_rows',
          outputSchema,
          handler: () => ({
            content: [{ type: 'text' as const, text: JSON.stringify({ rows }) }],
            structuredContent: { rows },
          }),
        },
      ],
    });
    const result = await kit.call('typed_rows');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('<error_code>PAYLOAD_TOO_LARGE</error_code>');
    expect(metaOf<EgressRecord>(result, MetaKey.EGRESS)).toMatchObject({ keptBytes: 0, limitBytes: 2_048 });
    expect(kit.logs.events('egress.refused')).toHaveLength(1);
    await kit.close();
  });

  it('cuts a long text field of structuredContent (a file read with an outputSchema) instead of refusing, keeping the schema valid', async () => {
    // As server-filesystem's read_text_file: the file's text in a content block and in structuredContent.
    const outputSchema = z.object({ content: z.string() });
    const file = 'line of a file\n'.repeat(7_000); // about 100 KB
    let outcome: string | undefined;
    const observer = definePlugin({
      name: 'observer',
      version: '1.0.0',
      apply({ hooks }) {
        hooks.settled.tap({ name: 'observer', stage: Stage.LAST }, (_ctx, settled) => {
          outcome = settled.status;
        });
      },
    });
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 65_536 }), observer],
      tools: [
        {
          name: 'read_text_file',
          outputSchema,
          handler: () => ({ content: [{ type: 'text' as const, text: file }], structuredContent: { content: file } }),
        },
      ],
    });
    const result = await kit.call('read_text_file');
    expect(result.isError).toBeUndefined();
    const structured = result.structuredContent as { content: string };
    expect(outputSchema.safeParse(structured).success).toBe(true);
    expect(file.startsWith(structured.content)).toBe(true);
    expect(structured.content.length).toBeGreaterThan(10_000);
    expect(textOf(result)).toContain(interventionText(65_536));
    expect(oracleSize(result)).toBeLessThanOrEqual(65_536);
    expect(outcome).toBe('ok');
    await kit.close();
  });

  it('reports an outputSchema refusal as a refusal, naming maxPayloadBytes', async () => {
    const outputSchema = z.object({ rows: z.array(z.object({ id: z.number() })) });
    const rows = Array.from({ length: 1_000 }, (_, i) => ({ id: i }));
    let outcome: string | undefined;
    const observer = definePlugin({
      name: 'observer',
      version: '1.0.0',
      apply({ hooks }) {
        hooks.settled.tap({ name: 'observer', stage: Stage.LAST }, (_ctx, settled) => {
          outcome = settled.status;
        });
      },
    });
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 2_048 }), observer],
      tools: [{ name: 'typed_rows', outputSchema, handler: () => ({ content: [], structuredContent: { rows } }) }],
    });
    const result = await kit.call('typed_rows');
    expect(textOf(result)).toContain('<error_code>PAYLOAD_TOO_LARGE</error_code>');
    expect(textOf(result)).toContain('maxPayloadBytes');
    expect(outcome).toBe('refused');
    await kit.close();
  });

  it("keeps an outputSchema tool's small structuredContent whole and cuts only its text, which validates", async () => {
    const outputSchema = z.object({ total: z.number() });
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 2_048 })],
      tools: [
        {
          name: 'summary',
          outputSchema,
          handler: () => ({
            content: [{ type: 'text' as const, text: 'detail '.repeat(1_000) }],
            structuredContent: { total: 1_000 },
          }),
        },
      ],
    });
    const result = await kit.call('summary');
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ total: 1_000 });
    expect(textOf(result)).toContain(interventionText(2_048));
    await kit.close();
  });
});

describe('modes', () => {
  it('in audit mode logs what it would have cut and returns the result untouched', async () => {
    const big = text('a'.repeat(10_000));
    const logs = captureLogger();
    const server = createServer({
      name: 's',
      version: '1',
      logger: logs.logger,
      plugins: [egress({ maxPayloadBytes: 2_048, mode: 'audit' })],
    });
    server.tool({ name: 'big', handler: () => big });
    expect(await server.call('big')).toBe(big);
    const events = logs.events('egress.truncated');
    expect(events).toEqual([expect.objectContaining({ audit: true, tool: 'big', limitBytes: 2_048 })]);
    expect(events[0]!.originalBytes).toBeGreaterThanOrEqual(10_000);
    expect(events[0]!.keptBytes).toBeLessThan(2_048);
    const rows = Array.from({ length: 1_000 }, (_, i) => i);
    const typed: CallToolResult = { content: [], structuredContent: { rows } };
    server.tool({ name: 'typed', outputSchema: z.object({ rows: z.array(z.number()) }), handler: () => typed });
    expect(await server.call('typed')).toBe(typed);
    expect(logs.events('egress.refused')).toEqual([
      expect.objectContaining({ audit: true, tool: 'typed', code: 'PAYLOAD_TOO_LARGE', limitBytes: 2_048 }),
    ]);
    await server.close();
  });

  it('when off, does nothing at all', async () => {
    const big = text('a'.repeat(10_000));
    const server = createServer({
      name: 's',
      version: '1',
      logger: captureLogger().logger,
      plugins: [egress({ maxPayloadBytes: 2_048, mode: 'off' })],
    });
    server.tool({ name: 'big', handler: () => big });
    expect(await server.call('big')).toBe(big);
    expect(server.plugins).toHaveLength(0);
    await server.close();
  });
});

describe('imported tools', () => {
  const upstream: ToolSource = { kind: 'upstream', upstream: 'github', originalName: 'search', trusted: false };
  const draft = (name: string, result: () => CallToolResult, preset?: number): ToolDraft => {
    const tool: SluiceTool = {
      name,
      definition: { name, inputSchema: { type: 'object' } },
      policy: {},
      source: upstream,
    };
    if (preset !== undefined) tool.responseLimitBytes = preset;
    return { tool, base: async () => result() };
  };

  it(`asks the proxy to stop reading at ${UPSTREAM_READ_FACTOR}x the limit; limits the result by pattern`, async () => {
    const server = new TestServer({
      name: 's',
      version: '1',
      logger: captureLogger().logger,
      plugins: [egress({ tools: { 'github_*': { maxPayloadBytes: 8_192 } } })],
    });
    await server.admit(upstream, [
      draft('github_search', () => text('g'.repeat(100_000))),
      draft('github_tight', () => text(''), 10_000),
      draft('other', () => text('')),
    ]);
    const byName = new Map(server.tools().map((t) => [t.name, t]));
    expect(byName.get('github_search')?.responseLimitBytes).toBe(8_192 * UPSTREAM_READ_FACTOR);
    expect(byName.get('github_tight')?.responseLimitBytes).toBe(10_000); // a tighter cap set by someone else stays
    expect(byName.get('other')?.responseLimitBytes).toBeUndefined();
    expect(oracleSize(await server.call('github_search'))).toBeLessThanOrEqual(8_192);
    await server.close();
  });

  it('sets no read cap in audit mode, nor on local tools', async () => {
    const audit = new TestServer({
      name: 's',
      version: '1',
      logger: captureLogger().logger,
      plugins: [egress({ maxPayloadBytes: 4_096, mode: 'audit' })],
    });
    await audit.admit(upstream, [draft('github_search', () => text(''))]);
    expect(audit.tools()[0]?.responseLimitBytes).toBeUndefined();
    await audit.close();
    const local = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 4_096 })],
      tools: [{ name: 'mine', handler: () => text('') }],
    });
    expect(local.server.tools()[0]?.responseLimitBytes).toBeUndefined();
    await local.close();
  });
});
