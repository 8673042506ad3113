import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, refusal, Stage } from '@sluice/core';
import type { CallContext } from '@sluice/core';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { createTestKit, textOf, urlElicitationOf } from '../src/index.js';
import type { TestKit } from '../src/index.js';

/** A per-caller plugin: refuses callers without a token scope, and records what each call carried. */
function perCaller(seen: CallContext[]) {
  return definePlugin({
    name: 'per-caller',
    version: '1.0.0',
    apply({ hooks }) {
      hooks.preCall.tap({ name: 'per-caller', stage: Stage.RISK }, (ctx) => {
        seen.push(ctx);
        if (ctx.authInfo?.scopes.includes('write')) return undefined;
        return refusal({ code: 'NO_SCOPE', message: 'This tool needs the write scope.', suggestion: 'Ask for it.' });
      });
    },
  });
}

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};

describe('kit.call', () => {
  let kit: TestKit | undefined;
  afterEach(() => kit?.close());

  it('delivers authInfo to the pipeline, so a per-caller plugin can be tested', async () => {
    const seen: CallContext[] = [];
    kit = await createTestKit({ plugins: [perCaller(seen)], tools: [echo] });
    const authInfo = { token: 't', clientId: 'alice', scopes: ['write'] };
    expect(textOf(await kit.call('echo', { text: 'hi' }, { authInfo }))).toBe('hi');
    const refused = await kit.call('echo', { text: 'hi' }, { authInfo: { ...authInfo, scopes: ['read'] } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('NO_SCOPE');
    expect(seen.map((ctx) => ctx.authInfo?.clientId)).toEqual(['alice', 'alice']);
  });

  it('delivers headers in lower case, as an HTTP request carries them', async () => {
    const seen: CallContext[] = [];
    kit = await createTestKit({ plugins: [perCaller(seen)], tools: [echo] });
    await kit.call(
      'echo',
      { text: 'hi' },
      { headers: { 'X-Tenant': 'acme' }, authInfo: { token: 't', clientId: 'c', scopes: [] } },
    );
    expect(seen[0]?.headers['x-tenant']).toBe('acme');
  });

  it('passes meta beside them, and leaves no trace of its own in _meta', async () => {
    const seen: CallContext[] = [];
    kit = await createTestKit({ plugins: [perCaller(seen)], tools: [echo] });
    await kit.call('echo', { text: 'hi' }, { meta: { trace: 'abc' }, headers: { 'x-a': '1' } });
    expect({ ...seen[0]?.meta }).toEqual({ trace: 'abc' });
  });

  it('still reads a plain record as _meta, as its first signature did', async () => {
    const seen: CallContext[] = [];
    kit = await createTestKit({ plugins: [perCaller(seen)], tools: [echo] });
    await kit.call('echo', { text: 'hi' }, { trace: 'abc' });
    expect({ ...seen[0]?.meta }).toEqual({ trace: 'abc' });
    expect(seen[0]?.authInfo).toBeUndefined();
    expect(seen[0]?.headers).toEqual({});
  });
});

describe('urlElicitationOf', () => {
  const elicitation = {
    mode: 'url',
    url: 'https://gateway.example/connect/1',
    elicitationId: 'e-1',
    message: 'Connect',
  };

  it('reads the first URL elicitation of a -32042 error', async () => {
    const form = { mode: 'form', message: 'Who are you?', requestedSchema: { type: 'object', properties: {} } };
    const refused = Promise.reject(
      new ProtocolError(ProtocolErrorCode.UrlElicitationRequired, 'connect first', {
        elicitations: [form, elicitation],
      }),
    );
    expect(await urlElicitationOf(refused)).toEqual({
      url: elicitation.url,
      elicitationId: 'e-1',
      message: 'Connect',
    });
  });

  it('rejects, saying what came instead, for a result, another error or an error naming no elicitation', async () => {
    await expect(urlElicitationOf(Promise.resolve({ content: [] }))).rejects.toThrow(/got a result/);
    await expect(
      urlElicitationOf(Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidParams, 'bad'))),
    ).rejects.toThrow(/expected a URL elicitation \(-32042\)/);
    await expect(
      urlElicitationOf(
        Promise.reject(new ProtocolError(ProtocolErrorCode.UrlElicitationRequired, 'connect', { elicitations: [{}] })),
      ),
    ).rejects.toThrow(/names no URL elicitation/);
  });
});
