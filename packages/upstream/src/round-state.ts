import type * as Crypto from 'node:crypto';
import { requireCjs } from '@sluice/core/internal';

// node:crypto (and the streams it loads) comes with the first state sealed or opened, not with core: every server
// holds a seal, and most never carry an upstream's round.
let loadedCrypto: typeof Crypto | undefined;
const crypto = (): typeof Crypto => (loadedCrypto ??= requireCjs('node:crypto') as typeof Crypto);

/** What Sluice keeps between the rounds of an upstream's input-required call, sealed into `requestState`. */
export interface RoundState {
  /** The upstream's configured name. */
  readonly upstream: string;
  /** The tool's name at the upstream. */
  readonly tool: string;
  /** The upstream's own `requestState`, byte for byte, when it sent one. */
  readonly state?: string;
  /**
   * A state another party minted that the call carried when the upstream
   * asked (a risk approval's): shown to the pipeline again on the retry, so
   * that both round trips of one call compose.
   */
  readonly carried?: string;
}

/** Every state Sluice seals starts with this, so that a state another party minted (a risk approval) is not taken for ours. */
const PREFIX = 'sluice.v1.';
/** A sealed state older than this is refused: the client starts the call again. */
const TTL_MS = 10 * 60_000;
/** Longest state accepted from a client; the upstream's own state is bounded by this too. */
export const MAX_STATE_CHARS = 64 * 1_024;

/**
 * Seals the upstream's `requestState` with the upstream and tool it belongs
 * to, under an HMAC-SHA256, so that a client can carry it between rounds but
 * cannot alter it or redirect it to another upstream or tool. The key is
 * per process unless given (replicas behind one balancer need the same key).
 */
export class RoundStateSeal {
  private secret: Buffer | undefined;

  constructor(
    key?: Uint8Array,
    private readonly now: () => number = Date.now,
  ) {
    if (key !== undefined) this.secret = Buffer.from(key);
  }

  /** The key given, or one drawn at random on first use. */
  private get key(): Buffer {
    this.secret ??= crypto().randomBytes(32);
    return this.secret;
  }

  seal(state: RoundState): string {
    const body = Buffer.from(JSON.stringify({ ...state, expires: this.now() + TTL_MS }), 'utf8').toString('base64url');
    return `${PREFIX}${body}.${this.mac(body)}`;
  }

  /** Whether a state is one Sluice sealed (well-formed or not). */
  static isOurs(wire: string): boolean {
    return wire.startsWith(PREFIX);
  }

  /** The state, or a reason it is refused: altered, expired, or for another upstream or tool. */
  open(wire: string, upstream: string, tool: string): RoundState | string {
    const state = this.peek(wire);
    if (typeof state === 'string') return state;
    if (state.upstream !== upstream || state.tool !== tool) return 'it belongs to another upstream or tool';
    return state;
  }

  /** What a state Sluice sealed had carried of another party's (see `presentRound` in core), if it is ours and valid. */
  carriedBy(wire: string): string | undefined {
    if (!RoundStateSeal.isOurs(wire)) return undefined;
    const state = this.peek(wire);
    return typeof state === 'string' ? undefined : state.carried;
  }

  /** The state if Sluice sealed it and it has not expired, whoever it is for; else why not. */
  peek(wire: string): RoundState | string {
    if (wire.length > MAX_STATE_CHARS) return 'it is too long';
    const [body, mac] = wire.slice(PREFIX.length).split('.');
    if (body === undefined || mac === undefined || !this.verify(body, mac)) return 'it was altered or is not ours';
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return 'it was altered or is not ours';
    }
    const state = parsed as Partial<RoundState> & { expires?: unknown };
    if (typeof state.expires !== 'number' || state.expires < this.now()) return 'it expired';
    if (typeof state.upstream !== 'string' || typeof state.tool !== 'string') return 'it was altered or is not ours';
    return {
      upstream: state.upstream,
      tool: state.tool,
      ...(typeof state.state === 'string' ? { state: state.state } : {}),
      ...(typeof state.carried === 'string' ? { carried: state.carried } : {}),
    };
  }

  private mac(body: string): string {
    return crypto().createHmac('sha256', this.key).update(body).digest('base64url');
  }

  private verify(body: string, mac: string): boolean {
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    return expected.length === given.length && crypto().timingSafeEqual(expected, given);
  }
}
