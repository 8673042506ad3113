// A guarded feature request's context carries its incoming `_meta` (read as a tool call's is) and an
// `outgoingMeta` that taps write and the request itself (`send`) reads, through every guard wrapper.
import { describe, expect, it } from 'vitest';
import type { RequestContext, RequestExecutor } from '@sluice/core';
import { guardedRunner, sendRequest } from '../src/features/guarded-run.js';
import type { FeatureContext, FeatureGuards } from '../src/features/feature-context.js';
import { featureRequest } from '../src/features/feature-guards.js';
import { captureLogger } from '../../testing/src/index.js';

const signal = new AbortController().signal;
const fctx = (): FeatureContext =>
  featureRequest('resources/read', undefined, {}, 'in-process', captureLogger().logger);

/** A request path of one tap (which writes to `outgoingMeta`) and one guard wrapper (which spreads the context). */
function guards(seen: RequestContext[]): FeatureGuards {
  return {
    plan: (): RequestExecutor => (ctx) => {
      seen.push(ctx);
      ctx.outgoingMeta['test/written'] = ctx.meta['client/key'];
      return sendRequest({ ...ctx, responseLimitBytes: 1_000 });
    },
  };
}

describe('a guarded feature request', () => {
  it('reads the incoming _meta into a prototype-free context, and hands the request the outgoingMeta taps wrote', async () => {
    const seen: RequestContext[] = [];
    const run = guardedRunner(guards(seen));
    const raw = JSON.parse('{"client/key":"v","__proto__":{"polluted":true}}') as unknown;
    let sent: RequestContext | undefined;
    const answer = await run('resources/read', 'fs', fctx(), signal, { target: 'file:///a', meta: raw }, (ctx) => {
      sent = ctx;
      return Promise.resolve('answer');
    });
    expect(answer).toBe('answer');
    const [ctx] = seen;
    expect(Object.getPrototypeOf(ctx!.meta)).toBe(null);
    expect({ ...ctx!.meta }).toEqual({ 'client/key': 'v' });
    expect(ctx).toMatchObject({ kind: 'resources/read', upstream: 'fs', target: 'file:///a' });
    // The wrapper's copy of the context shares the record the tap wrote to.
    expect(sent?.outgoingMeta).toBe(ctx!.outgoingMeta);
    expect({ ...sent!.outgoingMeta }).toEqual({ 'test/written': 'v' });
    expect(sent?.responseLimitBytes).toBe(1_000);
  });

  it('starts each request with an empty outgoingMeta of its own', async () => {
    const seen: RequestContext[] = [];
    const run = guardedRunner(guards(seen));
    for (const key of ['one', 'two'])
      await run('prompts/get', 'fs', fctx(), signal, { target: 'p', meta: { 'client/key': key } }, () =>
        Promise.resolve(undefined),
      );
    expect(seen.map((ctx) => ({ ...ctx.outgoingMeta }))).toEqual([
      { 'test/written': 'one' },
      { 'test/written': 'two' },
    ]);
    expect(seen[0]!.outgoingMeta).not.toBe(seen[1]!.outgoingMeta);
  });

  it('refuses a _meta past the bounds of a tool call _meta with -32602, before any tap runs', async () => {
    const seen: RequestContext[] = [];
    const run = guardedRunner(guards(seen));
    const wide = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    for (const meta of [wide, [1, 2], 'text']) {
      const refused = await run('resources/read', 'fs', fctx(), signal, { target: 'file:///a', meta }, () =>
        Promise.resolve(undefined),
      ).catch((error: unknown) => error);
      expect((refused as { code?: unknown }).code).toBe(-32602);
      expect((refused as Error).message).toContain('_meta');
    }
    expect(seen).toEqual([]);
  });

  it('with nothing tapped, runs the request with no context, never reading its _meta', async () => {
    const run = guardedRunner({});
    const got: unknown[] = [];
    const wide = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    await run('resources/read', 'fs', undefined, signal, { target: 'file:///a', meta: wide }, (ctx) => {
      got.push(ctx);
      return Promise.resolve(undefined);
    });
    expect(got).toEqual([undefined]);
  });
});
