import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/core';
import { RiskOptions, risk } from '@sluice/plugin-risk';
import { needsApproval } from '../src/approval/policy.js';
import { resolveToolSettings } from '../src/policy.js';

const rules = RiskOptions.parse({
  tools: [
    { match: 'delete_*', hitl: true },
    { match: 'tracker/Close_*', sideEffect: 'remote-write' },
    { match: '!search_*', sendsUserData: true },
  ],
}).tools;

describe("per-tool rules read as core's tool selectors", () => {
  it('match the exposed or the upstream name, case-insensitively', () => {
    expect(resolveToolSettings(rules, 'tracker', ['tracker_DELETE_issue', 'DELETE_issue']).hitl).toBe(true);
    expect(resolveToolSettings(rules, 'tracker', ['search_issues', 'search_issues']).hitl).toBeUndefined();
  });

  it('select by upstream with upstream/glob, against the name at that upstream', () => {
    expect(resolveToolSettings(rules, 'tracker', ['tracker_close', 'close_issue']).sideEffect).toBe('remote-write');
    expect(resolveToolSettings(rules, 'mail', ['close_issue', 'close_issue']).sideEffect).toBeUndefined();
  });

  it('exclude with !', () => {
    expect(resolveToolSettings(rules, 'docs', ['search_docs', 'search_docs']).sendsUserData).toBeUndefined();
    expect(resolveToolSettings(rules, 'docs', ['fetch_doc', 'fetch_doc']).sendsUserData).toBe(true);
  });

  it('refuses a malformed selector at construction', () => {
    expect(() => risk({ tools: [{ match: 'a/b/c', hitl: true }] })).toThrow(SluiceError);
    expect(() => risk({ approval: { autoExecute: ['bad name!'] } })).toThrow(SluiceError);
  });
});

describe('the auto-execute list', () => {
  const approval = RiskOptions.parse({
    approval: { defaultFromLevel: 'L3', autoExecute: ['Search_*', '!search_admin'] },
  }).approval;

  it('runs listed tools unasked, case-insensitively, minus the exclusions', () => {
    expect(needsApproval(undefined, ['search_docs'], 'L4', approval)).toBe(false);
    expect(needsApproval(undefined, ['search_admin'], 'L4', approval)).toBe(true);
    expect(needsApproval(true, ['search_docs'], 'L4', approval)).toBe(true);
  });
});
