// The policy's decisions on requests that are not tool calls: resources, prompts, completions, and log levels.
import { describe, expect, it } from 'vitest';
import type { CallerIdentity } from '@sluice/core';
import { AuthzOptions } from '../src/options.js';
import { AuthzPolicy } from '../src/policy.js';
import type { FeatureRequest, UpstreamItems } from '../src/policy.js';

const caller = (scopes: string[]): CallerIdentity => ({
  method: 'apiKey',
  subject: 'k',
  clientId: 'k',
  scopes,
  keyName: 'k',
});

const policy = new AuthzPolicy(
  AuthzOptions.parse({
    rules: [
      { when: { scopes: ['tools'] }, allow: ['*'] },
      { when: { scopes: ['docs'] }, resources: ['FILE:///public/*', 'file:///{+path}'], prompts: ['fs_greet'] },
      { when: { scopes: ['ops'] }, upstreams: ['ops'] },
    ],
  }),
);

const read = (target: string, upstream = 'fs'): FeatureRequest => ({ kind: 'resources/read', upstream, target });

describe('AuthzPolicy.allowsFeature', () => {
  it('grants nothing but tools to a rule that names only tools', () => {
    const tools = caller(['tools']);
    expect(policy.allows(tools, 'anything')).toBe(true);
    expect(policy.allowsFeature(tools, read('file:///public/a'))).toBe(false);
    expect(policy.allowsFeature(tools, { kind: 'prompts/get', upstream: 'fs', target: 'fs_greet' })).toBe(false);
    expect(policy.allowsFeature(tools, { kind: 'prompts/list', upstream: 'fs', target: undefined })).toBe(false);
  });

  it('grants resources by canonical URI glob, templates by their text, and prompts by name, completions included', () => {
    const docs = caller(['docs']);
    expect(policy.allowsFeature(docs, read('file:///public/a'))).toBe(true);
    expect(policy.allowsFeature(docs, read('file:///secret/a'))).toBe(false);
    expect(
      policy.allowsFeature(docs, { kind: 'resources/templates/list', upstream: 'fs', target: 'file:///{+path}' }),
    ).toBe(true);
    const complete = { kind: 'completion/complete', upstream: 'fs' } as const;
    expect(policy.allowsFeature(docs, { ...complete, target: 'fs_greet', completing: 'prompt' })).toBe(true);
    expect(policy.allowsFeature(docs, { ...complete, target: 'fs_other', completing: 'prompt' })).toBe(false);
    // A prompt name is no resource: the resource globs do not grant it, nor the prompt selectors a URI.
    expect(policy.allowsFeature(docs, { ...complete, target: 'file:///public/a', completing: 'prompt' })).toBe(false);
    expect(policy.allowsFeature(docs, { kind: 'prompts/get', upstream: 'fs', target: 'fs_greet' })).toBe(true);
    expect(policy.allows(docs, 'fs_echo')).toBe(false);
  });

  it("grants every item of a named upstream, and nothing of another's", () => {
    const ops = caller(['ops']);
    expect(policy.allowsFeature(ops, read('file:///anything', 'ops'))).toBe(true);
    expect(policy.allowsFeature(ops, { kind: 'prompts/get', upstream: 'ops', target: 'x' })).toBe(true);
    expect(policy.allowsFeature(ops, read('file:///anything', 'fs'))).toBe(false);
    expect(policy.allows(ops, { name: 'ops_restart', source: { kind: 'upstream', upstream: 'ops' } })).toBe(true);
    expect(policy.allows(ops, { name: 'fs_echo', source: { kind: 'upstream', upstream: 'fs' } })).toBe(false);
  });

  it('refuses a rule that grants nothing', () => {
    expect(() => AuthzOptions.parse({ rules: [{ when: { scopes: ['x'] } }] })).toThrow(/grants something/);
  });
});

describe('AuthzPolicy.allowsLogLevel', () => {
  const served = (extra: Partial<UpstreamItems> = {}): UpstreamItems => ({
    upstream: 'fs',
    tools: [],
    resources: [],
    templates: [],
    prompts: [],
    ...extra,
  });
  const echo = { name: 'fs_echo', source: { kind: 'upstream' as const, upstream: 'fs' } };

  it('admits a caller granted anything the upstream serves, or the upstream itself, and no other', () => {
    const tools = caller(['tools']);
    expect(policy.allowsLogLevel(tools, served({ tools: [echo] }))).toBe(true);
    // Granted every tool, but this upstream serves none: nothing of it is the caller's.
    expect(policy.allowsLogLevel(tools, served({ prompts: ['fs_greet'] }))).toBe(false);
    const docs = caller(['docs']);
    expect(policy.allowsLogLevel(docs, served({ resources: ['file:///public/a'] }))).toBe(true);
    expect(policy.allowsLogLevel(docs, served({ templates: ['file:///{+path}'] }))).toBe(true);
    expect(policy.allowsLogLevel(docs, served({ prompts: ['fs_greet'] }))).toBe(true);
    expect(policy.allowsLogLevel(docs, served({ resources: ['file:///secret/a'], prompts: ['fs_other'] }))).toBe(false);
    expect(policy.allowsLogLevel(docs, served({ tools: [echo] }))).toBe(false);
    const ops = caller(['ops']);
    expect(policy.allowsLogLevel(ops, served({ upstream: 'ops' }))).toBe(true);
    expect(policy.allowsLogLevel(ops, served({ tools: [echo], resources: ['file:///public/a'] }))).toBe(false);
    expect(policy.allowsLogLevel(caller([]), served({ tools: [echo], resources: ['file:///public/a'] }))).toBe(false);
  });

  it("lets a server's own handler (no upstream) be set by a caller granted anything, and anonymous callers as `anonymous` says", () => {
    expect(policy.allowsLogLevel(caller(['docs']), undefined)).toBe(true);
    expect(policy.allowsLogLevel(caller([]), undefined)).toBe(false);
    expect(policy.allowsLogLevel(undefined, served())).toBe(true);
    const strict = new AuthzPolicy(AuthzOptions.parse({ anonymous: 'deny', rules: [{ allow: ['*'] }] }));
    expect(strict.allowsLogLevel(undefined, served({ tools: [echo] }))).toBe(false);
  });
});

describe('AuthzOptions.hidden', () => {
  it("answers hidden items as missing by default, and takes 'forbidden' and nothing else", () => {
    expect(AuthzOptions.parse({}).hidden).toBe('not_found');
    expect(AuthzOptions.parse({ hidden: 'forbidden' }).hidden).toBe('forbidden');
    expect(() => AuthzOptions.parse({ hidden: 'silent' })).toThrow();
  });
});
