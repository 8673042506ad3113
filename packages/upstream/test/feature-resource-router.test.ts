import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ResourceRouter } from '../src/features/resource-router.js';

const res = (uri: string) => ({ uri, name: uri });
const tpl = (uriTemplate: string) => ({ uriTemplate, name: uriTemplate });

describe('resource URIs are routed by their owner', () => {
  it('routes a listed URI to the upstream that listed it, and others through the templates', () => {
    const router = new ResourceRouter();
    router.claim('a', [res('a://one')], [tpl('a://items/{id}')]);
    router.claim('b', [res('b://one')], [tpl('b://{+path}')]);
    expect(router.ownerOf('a://one')).toBe('a');
    expect(router.ownerOf('a://items/7')).toBe('a');
    expect(router.ownerOf('b://deep/path/x')).toBe('b');
    expect(router.ownerOf('c://nobody')).toBeUndefined();
    expect(router.ownerOfTemplate('b://{+path}')).toBe('b');
  });

  it('refuses a URI two upstreams list, naming both, and the first keeps it', () => {
    const router = new ResourceRouter();
    router.claim('first', [res('x://shared')], []);
    const second = router.claim('second', [res('x://shared'), res('x://own')], []);
    expect(second.resources.map((r) => r.uri)).toEqual(['x://own']);
    expect(second.conflicts).toEqual([
      expect.objectContaining({ kind: 'resource', id: 'x://shared', owner: 'first', claimant: 'second' }),
    ]);
    expect(second.conflicts[0]!.reason).toMatch(/"first".*"second"/);
    expect(router.ownerOf('x://shared')).toBe('first');
  });

  it("refuses overlapping templates, a URI another template matches, and a template matching another one's URI", () => {
    const router = new ResourceRouter();
    router.claim('a', [res('logs://today')], [tpl('files://{+path}')]);
    const b = router.claim(
      'b',
      [res('files://b/readme')],
      [tpl('files://logs/{name}'), tpl('logs://{day}'), tpl('b://{x}')],
    );
    expect(b.templates.map((t) => t.uriTemplate)).toEqual(['b://{x}']);
    expect(b.resources).toEqual([]);
    expect(b.conflicts.map((c) => [c.kind, c.id, c.owner])).toEqual([
      ['template', 'files://logs/{name}', 'a'],
      ['resource', 'files://b/readme', 'a'],
      ['template', 'logs://{day}', 'a'],
    ]);
  });

  it("replaces an upstream's claims when it lists again, and forgets them when released", () => {
    const router = new ResourceRouter();
    router.claim('a', [res('a://old')], []);
    router.claim('a', [res('a://new')], []);
    expect(router.ownerOf('a://old')).toBeUndefined();
    expect(router.ownerOf('a://new')).toBe('a');
    router.release('a');
    expect(router.ownerOf('a://new')).toBeUndefined();
    expect(router.claim('b', [res('a://new')], []).conflicts).toEqual([]);
  });

  it('reports an invalid template instead of routing through it', () => {
    const router = new ResourceRouter();
    const claimed = router.claim('a', [], [tpl('x://{'.padEnd(2_000_000, 'a'))]);
    expect(claimed.templates).toEqual([]);
    expect(claimed.conflicts[0]?.reason).toMatch(/invalid URI template/);
  });

  it("does not throw on a template the SDK's matcher throws on ('{}' against a blank URI), which matches nothing", () => {
    // The counterexample fast-check found: one upstream lists the template `{}`, another the resource ' '.
    const router = new ResourceRouter();
    router.claim('u1', [], [tpl('{}')]);
    expect(() => router.claim('u3', [res(' ')], [])).not.toThrow();
    expect(() => router.ownerOf(' ')).not.toThrow();
  });

  it('never throws on what hostile upstreams list, and every URI it keeps routes to exactly the upstream that kept it', () => {
    const uri = fc.oneof(fc.string({ maxLength: 40 }), fc.webUrl(), fc.constantFrom('a://x', 'a://{x}', '{', '}{'));
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('u1', 'u2', 'u3'), fc.array(uri, { maxLength: 8 }), fc.array(uri, { maxLength: 4 })),
          {
            maxLength: 6,
          },
        ),
        (claims) => {
          const router = new ResourceRouter();
          const kept = new Map<string, string>();
          for (const [owner, uris, templates] of claims) {
            for (const [u, o] of [...kept]) if (o === owner) kept.delete(u);
            const result = router.claim(owner, uris.map(res), templates.map(tpl));
            for (const r of result.resources) kept.set(r.uri, owner);
          }
          for (const [u, owner] of kept) expect(router.ownerOf(u)).toBe(owner);
        },
      ),
      { numRuns: 200 },
    );
  });
});
