// Who hears of a change to some items of a list: the filter is asked once per caller, so that one caller's many
// sessions and streams cost one filter of the changed items (attack: a key opens hundreds of sessions and an upstream
// flips thousands of tools, each change filtered once per session), while callers whose grants may differ are each
// asked.
import { describe, expect, it } from 'vitest';
import type { CallerIdentity } from '@sluice/core';
import { changedListFor, itemsChanged } from '@sluice/core/internal';
import type { ChangeAudience } from '@sluice/core/internal';
import { authInfoFor, identityOf as identityOfAudience } from '../src/auth/identity.js';

const key = (name: string, scopes: string[] = []): CallerIdentity => ({
  method: 'apiKey',
  subject: name,
  clientId: name,
  keyName: name,
  scopes,
});
const audience = (identity: CallerIdentity | undefined, transport: ChangeAudience['transport'] = 'http') => ({
  // A new AuthInfo and identity per request, as the listener makes them.
  authInfo: identity === undefined ? undefined : authInfoFor({ ...identity }, undefined),
  transport,
});

describe('itemsChanged', () => {
  it('asks once per caller, whatever the number of its connections, and tells each what its own answer says', () => {
    const asked: string[] = [];
    const change = itemsChanged('tools', ({ authInfo }) => {
      const who = authInfo?.clientId ?? 'anonymous';
      asked.push(who);
      return who === 'reader';
    });
    for (let session = 0; session < 50; session++) {
      expect(changedListFor(change, audience(key('reader')))).toBe('tools');
      expect(changedListFor(change, audience(key('outsider')))).toBeUndefined();
      expect(changedListFor(change, audience(undefined))).toBeUndefined();
    }
    expect(asked.sort()).toEqual(['anonymous', 'outsider', 'reader']);
  });

  it('asks again for a caller whose scopes differ, and over another transport', () => {
    let asked = 0;
    const change = itemsChanged('prompts', () => (asked++, true));
    changedListFor(change, audience(key('reader', ['read'])));
    changedListFor(change, audience(key('reader', ['read', 'write'])));
    changedListFor(change, audience(key('reader', ['read']), 'in-process'));
    changedListFor(change, audience(key('reader', ['read'])));
    expect(asked).toBe(3);
  });

  it("asks once for an OAuth caller's sessions opened with different tokens, and again when a lasting claim differs", () => {
    // Attack: a caller opens hundreds of sessions, each with a fresh token (its iat, exp and jti differ); the answer
    // was kept per token, so each session filtered every changed item.
    const asked: unknown[] = [];
    const change = itemsChanged('tools', ({ authInfo }) => {
      asked.push(identityOfAudience(authInfo)?.claims?.tenant);
      return true;
    });
    const oauth = (claims: Record<string, unknown>): CallerIdentity => ({
      method: 'oauth',
      subject: 'alice',
      clientId: 'app',
      scopes: ['read'],
      claims,
    });
    for (let token = 0; token < 40; token++)
      changedListFor(
        change,
        audience(
          oauth({
            sub: 'alice',
            tenant: 'a',
            iat: 1000 + token,
            exp: 2000 + token,
            nbf: token,
            jti: `t${token}`,
            uti: `u${token}`,
            sid: `s${token}`,
          }),
        ),
      );
    changedListFor(change, audience(oauth({ sub: 'alice', tenant: 'b', iat: 1, exp: 2, jti: 'other' })));
    expect(asked).toEqual(['a', 'b']);
  });

  it('asks again for an AuthInfo another verifier made whose scopes differ', () => {
    let asked = 0;
    const change = itemsChanged('tools', () => (asked++, true));
    const foreign = (scopes: string[]) => ({
      authInfo: { token: 't', clientId: 'app', scopes, extra: { sub: 'alice' } },
      transport: 'http' as const,
    });
    changedListFor(change, foreign(['read']));
    changedListFor(change, foreign(['read', 'admin']));
    changedListFor(change, foreign(['read']));
    expect(asked).toBe(2);
  });
});
