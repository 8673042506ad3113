// Who a caller is for per-caller shares and bindings: the verified caller, never the OAuth client that every user
// of one app shares (attack: one user of an app fills the share of all its users).
import { describe, expect, it } from 'vitest';
import { callerKeyOf } from '@sluice/core';
import type { CallerIdentity } from '@sluice/core';
import { authInfoFor } from '../src/auth/identity.js';

const oauth = (subject: string, clientId = 'the-app'): CallerIdentity => ({
  method: 'oauth',
  subject,
  clientId,
  scopes: [],
});

describe('callerKeyOf', () => {
  it('tells two users of one OAuth client apart, and one user of two clients as one', () => {
    const ann = callerKeyOf(authInfoFor(oauth('ann'), undefined));
    const bob = callerKeyOf(authInfoFor(oauth('bob'), undefined));
    expect(ann).toBe('oauth:ann');
    expect(bob).toBe('oauth:bob');
    expect(callerKeyOf(authInfoFor(oauth('ann', 'another-app'), undefined))).toBe(ann);
  });

  it('names an API key caller by the key, and has no caller without authentication', () => {
    const key: CallerIdentity = { method: 'apiKey', subject: 'ci', clientId: 'ci', keyName: 'ci', scopes: [] };
    expect(callerKeyOf(authInfoFor(key, undefined))).toBe('apiKey:ci');
    expect(callerKeyOf(undefined)).toBeUndefined();
  });

  it("reads another verifier's AuthInfo (an adopted server's own auth) by its client and subject", () => {
    expect(callerKeyOf({ token: 't', clientId: 'app', scopes: [], extra: { sub: 'ann' } })).toBe('auth:app:ann');
    expect(callerKeyOf({ token: 't', clientId: 'app', scopes: [] })).toBe('auth:app');
  });
});
