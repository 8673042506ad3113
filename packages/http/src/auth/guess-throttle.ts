import { createHmac, randomBytes } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { UNGUESSABLE_KEY_BITS, keyStrengthBits } from './api-keys.js';

/** Sources (address prefixes) whose failures are counted at once; beyond, the oldest is forgotten. */
export const MAX_GUESS_SOURCES = 4_096;
/** Credentials remembered as admitted (with whether they are too random to guess); beyond, the oldest is forgotten. */
export const MAX_ADMITTED_CREDENTIALS = 1_024;

export interface GuessLimits {
  /** Failed (or in-flight) checks one source may cause per window before it is throttled. */
  readonly maxFailures: number;
  readonly windowMs: number;
}

export const DEFAULT_GUESS_LIMITS: GuessLimits = { maxFailures: 20, windowMs: 60_000 };

interface SourceCount {
  failures: number;
  inFlight: number;
  /** When the window that counts the failures ends. */
  until: number;
}

/** The verdict before a check: `check` reserves an in-flight slot that `settle` must release. */
export type GuessAdmission =
  | { readonly kind: 'check'; readonly source: string; settle(ok: boolean): void }
  | { readonly kind: 'throttled'; readonly retryAfterSeconds: number; readonly source: string };

/**
 * Who guesses: an IPv4 address by its /24, an IPv6 address by its /64, and
 * all of loopback as one, so that rotating neighbouring addresses does not
 * buy fresh budgets.
 */
export function sourceOf(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(v4)) {
    if (v4.startsWith('127.')) return 'loopback';
    return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  }
  if (address === '::1') return 'loopback';
  const groups = expandIPv6(address);
  return groups === undefined ? 'unknown' : `${groups.slice(0, 4).join(':')}::/64`;
}

function expandIPv6(address: string): string[] | undefined {
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((g) => g.toLowerCase());
}

/**
 * Failed credential checks by source, in fixed windows, with in-flight checks
 * reserved before they run, so that concurrent guesses cannot all be checked
 * against the same remaining budget. Once a source has used its budget, a
 * credential from it is refused unchecked, unless no guesser can reach it: a
 * configured key too random to guess (`unguessable`), or a bearer token this
 * listener admitted before whose own estimate is as strong (remembered by
 * keyed fingerprint, never in the clear). Checking those leaks nothing a
 * guesser can use, and guessers at the operator's address do not lock them
 * out. Any other credential, right or wrong, is refused with its source while
 * the source is over budget: nothing in a request tells the holder of a
 * guessable key from a guesser who has just found it, so answering a right
 * guess differently from a wrong one would let the guessing go on.
 */
export class GuessThrottle {
  private readonly sources = new Map<string, SourceCount>();
  /** Keyed fingerprint of an admitted credential -> whether it is too random to guess. */
  private readonly admitted = new Map<string, boolean>();
  private readonly pepper = randomBytes(32);

  /**
   * `unguessable`, when given, names credentials that pass a throttled
   * source without having been admitted before: configured keys no guesser
   * can reach (see `unguessableKeys`).
   */
  constructor(
    private readonly limits: GuessLimits = DEFAULT_GUESS_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly unguessable?: (credential: string) => boolean,
  ) {}

  /** Called before a credential (an `Authorization` value, `Bearer <token>`) is checked. */
  admit(address: string | undefined, credential: string): GuessAdmission {
    const source = sourceOf(address);
    const count = this.current(source);
    if (count.failures + count.inFlight >= this.limits.maxFailures && !this.passes(credential)) {
      return {
        kind: 'throttled',
        source,
        retryAfterSeconds: Math.max(1, Math.ceil((count.until - this.now()) / 1_000)),
      };
    }
    count.inFlight++;
    let settled = false;
    return {
      kind: 'check',
      source,
      settle: (ok) => {
        if (settled) return;
        settled = true;
        count.inFlight--;
        if (ok) this.remember(credential);
        else count.failures++;
      },
    };
  }

  private fingerprint(credential: string): string {
    return createHmac('sha256', this.pepper).update(credential).digest('base64url');
  }

  /**
   * Whether the credential passes a throttled source: a configured key too
   * random to guess, or a token this throttle saw admitted (and still
   * remembers) that is as random. A guessable credential never does, even
   * one admitted before.
   */
  passes(credential: string): boolean {
    return this.unguessable?.(credential) === true || this.admitted.get(this.fingerprint(credential)) === true;
  }

  private remember(credential: string): void {
    const print = this.fingerprint(credential);
    // Estimated once per credential while it is remembered: a call that succeeds does not pay for it again.
    const strong =
      this.admitted.get(print) ?? keyStrengthBits(credential.replace(/^bearer /i, '')) >= UNGUESSABLE_KEY_BITS;
    this.admitted.delete(print);
    while (this.admitted.size >= MAX_ADMITTED_CREDENTIALS) {
      const oldest = this.admitted.keys().next().value;
      if (oldest === undefined) break;
      this.admitted.delete(oldest);
    }
    this.admitted.set(print, strong);
  }

  private current(source: string): SourceCount {
    const now = this.now();
    const found = this.sources.get(source);
    if (found !== undefined) {
      if (now < found.until) return found;
      // A new window; checks still running keep their reservation.
      found.failures = 0;
      found.until = now + this.limits.windowMs;
      return found;
    }
    while (this.sources.size >= MAX_GUESS_SOURCES) {
      const oldest = [...this.sources].find(([, c]) => c.inFlight === 0)?.[0] ?? this.sources.keys().next().value;
      if (oldest === undefined) break;
      this.sources.delete(oldest);
    }
    const fresh = { failures: 0, inFlight: 0, until: now + this.limits.windowMs };
    this.sources.set(source, fresh);
    return fresh;
  }
}
