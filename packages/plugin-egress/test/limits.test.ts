import { describe, expect, it } from 'vitest';
import type { SluiceTool } from '@sluice/core';
import { SluiceError } from '@sluice/core';
import { createTestKit } from '@sluice/testing';
import { egress } from '@sluice/plugin-egress';
import { EgressErrorCode } from '../src/errors.js';
import { NO_LIMIT, ToolLimits } from '../src/limits.js';
import { EgressOptions } from '../src/options.js';

const tool = (name: string, policy: SluiceTool['policy'] = {}): SluiceTool => ({
  name,
  definition: { name, inputSchema: { type: 'object' } },
  policy,
  source: { kind: 'local' },
});
const limits = (options: EgressOptions) => new ToolLimits(EgressOptions.parse(options), 'egress');

describe('which limit applies to a tool', () => {
  it('prefers the tool policy, then an exact name, then the first matching pattern, then the server-wide limit', () => {
    const l = limits({
      maxPayloadBytes: 9_000,
      tools: {
        'github_*': { maxPayloadBytes: 4_000 },
        github_search: { maxPayloadBytes: 3_000 },
        'git*': { maxPayloadBytes: 5_000 },
        'db.?et': { maxPayloadBytes: 6_000 },
      },
    });
    expect(l.resolve(tool('github_search', { egress: { maxPayloadBytes: 2_000 } }))).toBe(2_000);
    expect(l.resolve(tool('github_search'))).toBe(3_000);
    expect(l.resolve(tool('github_issues'))).toBe(4_000);
    expect(l.resolve(tool('gitlab_issues'))).toBe(5_000);
    expect(l.resolve(tool('db.get'))).toBe(6_000);
    expect(l.resolve(tool('db.getx'))).toBe(9_000);
    expect(l.resolve(tool('dbxget'))).toBe(9_000); // "." is literal
  });

  it('reads an upstream/ selector against the tool’s upstream and its name there', () => {
    const l = limits({ tools: { 'github/search_*': { maxPayloadBytes: 2_000 } } });
    const imported = (upstream: string): SluiceTool => ({
      ...tool('gh_search_code'),
      source: { kind: 'upstream', upstream, originalName: 'search_code', trusted: false },
    });
    expect(l.resolve(imported('github'))).toBe(2_000);
    expect(l.resolve(imported('gitlab'))).toBe(NO_LIMIT);
    expect(l.resolve(tool('search_code'))).toBe(NO_LIMIT);
  });

  it('applies no limit to a tool no rule names when there is no server-wide limit', () => {
    expect(limits({ tools: { 'a*': { maxPayloadBytes: 2_000 } } }).resolve(tool('b'))).toBe(NO_LIMIT);
  });

  it('resolves a tool once and answers from its cache afterwards', () => {
    let reads = 0;
    const policy = {
      get egress() {
        reads++;
        return { maxPayloadBytes: 2_048 };
      },
    };
    const l = limits({});
    const t = tool('counted', policy);
    for (let i = 0; i < 5; i++) expect(l.of(t)).toBe(2_048);
    expect(reads).toBe(1);
  });

  it('rejects a malformed tool policy when the tool is registered, naming the tool and the field', async () => {
    const kit = createTestKit({
      plugins: [egress({ maxPayloadBytes: 4_096 })],
      tools: [{ name: 'tiny', policy: { egress: { maxPayloadBytes: 100 } }, handler: () => ({ content: [] }) }],
    });
    const error = await kit.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(SluiceError.is(error)).toBe(true);
    expect((error as SluiceError).code).toBe(EgressErrorCode.INVALID_POLICY);
    expect((error as SluiceError).message).toMatch(/Tool "tiny".*egress\.maxPayloadBytes/);
  });
});
