import { describe, expect, it } from 'vitest';
import { Server } from '@modelcontextprotocol/server';
import { CoreErrorCode, createServer } from '@sluice/core';
import { captureLogger, errorOf } from '@sluice/testing';
import { call, connectClient } from '../../core/test/fixtures/upstream-helpers.js';
import { MAX_ITEM_TEXT_CHARS, MAX_LIST_BYTES, MAX_LIST_PAGES, readList } from '../src/bounded-list.js';
import { MAX_FEATURE_ITEMS } from '../src/upstream-features.js';
import '../src/index.js'; // gives every server import()

// A hostile upstream's lists: pages that never end, or items as large as a message allows. Each list is read page by
// page and stops at its bounds; the pages the upstream was asked for are counted.

/** An upstream whose `method` serves `pages` pages (endless when undefined) of what `page` makes. */
function pagingUpstream(
  method: 'tools/list' | 'resources/list',
  page: (n: number) => object[],
  pages?: number,
): { upstream: Server; asked: () => number } {
  const capabilities = method === 'tools/list' ? { tools: {} } : { resources: {} };
  const upstream = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities });
  let asked = 0;
  const answer = (cursor: string | undefined) => {
    asked++;
    const n = cursor === undefined ? 0 : Number(cursor);
    const next = pages === undefined || n + 1 < pages ? { nextCursor: String(n + 1) } : {};
    return { items: page(n), next };
  };
  if (method === 'tools/list')
    upstream.setRequestHandler('tools/list', (request) => {
      const { items, next } = answer(request.params?.cursor);
      return { tools: items as never, ...next };
    });
  else {
    upstream.setRequestHandler('resources/list', (request) => {
      const { items, next } = answer(request.params?.cursor);
      return { resources: items as never, ...next };
    });
    upstream.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  }
  return { upstream, asked: () => asked };
}

const resources = (n: number, count: number, description = '') =>
  Array.from({ length: count }, (_, i) => ({ uri: `file:///r/${n}/${i}`, name: `r${n}_${i}`, description }));
const tools = (n: number, count: number, description = 'a tool') =>
  Array.from({ length: count }, (_, i) => ({ name: `t${n}_${i}`, description, inputSchema: { type: 'object' } }));

function gateway() {
  const log = captureLogger();
  return { server: createServer({ name: 'gateway', version: '1.0.0', logger: log.logger }), log };
}

describe("an upstream's resources/list is read within bounds", () => {
  it('stops asking for pages at 10,000 items, keeps 10,000 and reports the rest as left out', async () => {
    const { upstream, asked } = pagingUpstream('resources/list', (n) => resources(n, 1_000));
    const { server, log } = gateway();
    const { skipped } = await server.import({ name: 'endless', connection: { type: 'in-process', server: upstream } });
    expect(asked()).toBe(MAX_FEATURE_ITEMS / 1_000);
    expect(skipped).toContainEqual({
      name: 'endless',
      reason: `Upstream "endless" lists more than ${MAX_FEATURE_ITEMS} resources; the first ${MAX_FEATURE_ITEMS} are kept and the rest are left out`,
      by: 'core',
    });
    expect(log.events('upstream.list_cut')).toMatchObject([
      { level: 40, upstream: 'endless', list: 'resources', kept: MAX_FEATURE_ITEMS, bound: 'items' },
    ]);
    const { client } = await connectClient(server);
    expect((await client.listResources()).resources).toHaveLength(MAX_FEATURE_ITEMS);
    await client.close();
    await server.close();
  }, 60_000);

  it('stops at 16 MiB of page JSON: the page that crosses it is not kept, and each description is cut', async () => {
    // 4 MB a page: four pages fit in 16 MiB, the fifth does not; fifty are offered.
    const { upstream, asked } = pagingUpstream('resources/list', (n) => resources(n, 1, 'd'.repeat(4_000_000)), 50);
    const { server, log } = gateway();
    const { skipped } = await server.import({ name: 'huge', connection: { type: 'in-process', server: upstream } });
    expect(asked()).toBe(5);
    expect(skipped).toContainEqual({
      name: 'huge',
      reason: `Upstream "huge" lists resources over ${MAX_LIST_BYTES} bytes of JSON; the first 4 are kept and the rest are left out`,
      by: 'core',
    });
    expect(log.events('upstream.texts_cut')).toMatchObject([
      { upstream: 'huge', list: 'resources', items: 4, max: MAX_ITEM_TEXT_CHARS },
    ]);
    const { client } = await connectClient(server);
    const listed = (await client.listResources()).resources;
    expect(listed.map((r) => r.name)).toEqual(['r0_0', 'r1_0', 'r2_0', 'r3_0']);
    for (const resource of listed) {
      expect(resource.description).toHaveLength(MAX_ITEM_TEXT_CHARS);
      expect(resource.description?.endsWith('…')).toBe(true);
    }
    await client.close();
    await server.close();
  }, 60_000);
});

describe("an upstream's tools/list is read within bounds", () => {
  it('imports at most 10,000 tools, asks for no page past them, and reports the rest as left out', async () => {
    const { upstream, asked } = pagingUpstream('tools/list', (n) => tools(n, 1_000), 30);
    const { server, log } = gateway();
    const { imported, skipped } = await server.import({
      name: 'many',
      connection: { type: 'in-process', server: upstream },
    });
    expect(asked()).toBe(MAX_FEATURE_ITEMS / 1_000);
    expect(imported).toHaveLength(MAX_FEATURE_ITEMS);
    expect(server.listTools()).toHaveLength(MAX_FEATURE_ITEMS);
    expect(skipped).toContainEqual({
      name: 'many',
      reason: `Upstream "many" lists more than ${MAX_FEATURE_ITEMS} tools; the first ${MAX_FEATURE_ITEMS} are kept and the rest are left out`,
      by: 'core',
    });
    expect(log.events('upstream.list_cut')).toMatchObject([{ upstream: 'many', list: 'tools', bound: 'items' }]);
    await server.close();
  }, 60_000);

  it("cuts a tool's description at 10,000 characters and says so", async () => {
    const { upstream } = pagingUpstream('tools/list', (n) => tools(n, 2, 'x'.repeat(1_000_000)), 1);
    const { server, log } = gateway();
    const { skipped } = await server.import({ name: 'wordy', connection: { type: 'in-process', server: upstream } });
    expect(skipped).toEqual([]);
    for (const tool of server.listTools()) expect(tool.description).toHaveLength(MAX_ITEM_TEXT_CHARS);
    expect(log.events('upstream.texts_cut')).toMatchObject([{ upstream: 'wordy', list: 'tools', items: 2 }]);
    await server.close();
  });

  it("still checks a result against the tool's output schema, with no list kept by the SDK client", async () => {
    const upstream = new Server({ name: 'typed', version: '1.0.0' }, { capabilities: { tools: {} } });
    upstream.setRequestHandler('tools/list', () => ({
      tools: [
        {
          name: 'temp',
          inputSchema: { type: 'object' },
          outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
        },
      ],
    }));
    upstream.setRequestHandler('tools/call', () => ({
      content: [{ type: 'text', text: 'warm' }],
      structuredContent: { celsius: 'warm' },
    }));
    const { server } = gateway();
    await server.import({ name: 'typed', connection: { type: 'in-process', server: upstream } });
    const { client } = await connectClient(server);
    const result = await call(client, 'temp');
    expect(errorOf(result)).toMatchObject({ code: CoreErrorCode.UPSTREAM_INVALID_RESPONSE, upstream: 'typed' });
    await client.close();
    await server.close();
  });
});

describe('readList', () => {
  const page = (items: number[], nextCursor?: string) => ({ items, ...(nextCursor ? { nextCursor } : {}) });

  it(`stops after ${MAX_LIST_PAGES} pages of a cursor that never ends, even when they are empty`, async () => {
    let asked = 0;
    const read = await readList(
      async (cursor) => {
        asked++;
        return page([], `${Number(cursor ?? 0) + 1}`);
      },
      (p) => p.items.map((value) => ({ value })),
      10,
    );
    expect(asked).toBe(MAX_LIST_PAGES);
    expect(read.cut).toEqual({ by: 'pages', max: MAX_LIST_PAGES });
  });

  it('ends a list whose page names the cursor it was asked with, as its last', async () => {
    let asked = 0;
    const read = await readList(
      async () => {
        asked++;
        return page([asked], 'same');
      },
      (p) => p.items.map((value) => ({ value })),
      10,
    );
    expect(asked).toBe(2);
    expect(read).toEqual({ items: [{ value: 1 }, { value: 2 }], shortened: 0 });
  });

  it('keeps a full list of exactly the bound whole, and cuts a description never inside a surrogate pair', async () => {
    const long = `${'a'.repeat(MAX_ITEM_TEXT_CHARS - 2)}😀😀`;
    const read = await readList(
      async () => ({ items: [{ description: long }, { description: 'short' }], nextCursor: undefined }),
      (p) => p.items,
      2,
    );
    expect(read.cut).toBeUndefined();
    expect(read.shortened).toBe(1);
    expect(read.items[0]?.description).toBe(`${'a'.repeat(MAX_ITEM_TEXT_CHARS - 2)}…`);
    expect(read.items[1]?.description).toBe('short');
  });
});
