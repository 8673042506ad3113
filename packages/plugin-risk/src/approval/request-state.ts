import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../ledger/canonical.js';

/** What an approval state is bound to: the same call, by the same caller, of the same tool definition. */
export interface StateBinding {
  /** The auth subject, or an anonymous marker. */
  readonly principal: string;
  /** The exposed tool name. */
  readonly tool: string;
  /** The tool's source: its upstream's configured name, or `local`. */
  readonly server: string;
  /** SHA-256 of the canonical arguments. */
  readonly args: string;
  /** The tool's ledger fingerprint. */
  readonly fingerprint: string;
}

const PayloadSchema = z
  .object({
    v: z.literal(1),
    p: z.string().max(512),
    t: z.string().max(128),
    s: z.string().max(128),
    a: z.string().length(64),
    f: z.string().max(128),
    e: z.number().int().nonnegative(),
    n: z.string().min(16).max(64),
    /** An operator question's id: the state names the question, whose answer is in the store. */
    q: z.string().max(64).optional(),
  })
  .strict();
type Payload = z.infer<typeof PayloadSchema>;

export type StateCheck =
  | { readonly ok: true; readonly nonce: string; readonly expiresAt: number; readonly question: string | undefined }
  | { readonly ok: false; readonly why: 'malformed' | 'forged' | 'other-call' | 'expired' };

const VERSION = 's1';
/** Far above what `mint` makes; a bound on what an attacker can make us decode. */
const MAX_STATE_LENGTH = 2_048;
const MAC_BYTES = 32;
// Domain separation: the key may be shared with other uses; a MAC of ours means nothing there.
const CONTEXT = 'dev.sluice/risk/approval-state\u0000';

/**
 * Seals the 2026-07-28 approval `requestState` with HMAC-SHA256: the
 * principal, tool, argument digest, tool fingerprint, expiry and a random
 * nonce, as `s1.<payload>.<mac>` (base64url). The client echoes it back
 * verbatim; anything it changes breaks the MAC.
 */
export class RequestStateCodec {
  constructor(private readonly key: Buffer) {}

  /** `question`: the operator question the state names (absent: the client answers). */
  mint(
    binding: StateBinding,
    expiresAt: number,
    question?: string,
  ): { readonly state: string; readonly nonce: string } {
    const nonce = randomBytes(16).toString('base64url');
    const payload: Payload = {
      v: 1,
      p: binding.principal,
      t: binding.tool,
      s: binding.server,
      a: binding.args,
      f: binding.fingerprint,
      e: expiresAt,
      n: nonce,
      ...(question === undefined ? {} : { q: question }),
    };
    const body = `${VERSION}.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`;
    return { state: `${body}.${this.mac(body).toString('base64url')}`, nonce };
  }

  /** Verifies the MAC (in constant time), then the binding and the expiry. */
  check(state: unknown, binding: StateBinding, now: number): StateCheck {
    if (typeof state !== 'string' || state.length > MAX_STATE_LENGTH) return { ok: false, why: 'malformed' };
    const parts = state.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION) return { ok: false, why: 'malformed' };
    const body = `${parts[0]}.${parts[1]}`;
    const given = Buffer.from(parts[2] as string, 'base64url');
    // Node decodes base64url leniently (stray characters, spare low bits): only the exact encoding of a MAC counts.
    if (given.length !== MAC_BYTES || given.toString('base64url') !== parts[2]) return { ok: false, why: 'malformed' };
    if (!timingSafeEqual(given, this.mac(body))) return { ok: false, why: 'forged' };
    const payload = parsePayload(parts[1] as string);
    if (payload === undefined) return { ok: false, why: 'malformed' };
    if (!sameBinding(payload, binding)) return { ok: false, why: 'other-call' };
    if (now >= payload.e) return { ok: false, why: 'expired' };
    return { ok: true, nonce: payload.n, expiresAt: payload.e, question: payload.q };
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key).update(CONTEXT).update(body, 'utf8').digest();
  }
}

function parsePayload(encoded: string): Payload | undefined {
  try {
    const parsed = PayloadSchema.safeParse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function sameBinding(payload: Payload, binding: StateBinding): boolean {
  return (
    payload.p === binding.principal &&
    payload.t === binding.tool &&
    payload.s === binding.server &&
    payload.a === binding.args &&
    payload.f === binding.fingerprint
  );
}

/**
 * SHA-256 of the arguments' canonical JSON, so that key order does not
 * matter. Arguments that are not canonical JSON (a lone surrogate) fall back
 * to their plain JSON text: still the same for the same call.
 */
export function argumentsDigest(args: Readonly<Record<string, unknown>>): string {
  let text: string;
  try {
    text = canonicalJson(args);
  } catch {
    text = JSON.stringify(args);
  }
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
