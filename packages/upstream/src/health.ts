import type { Logger } from '@sluice/core';
import type { UpstreamTransportType } from './options.js';

/**
 * - `connecting`: the first connection attempt is running.
 * - `healthy`: connected, and the last list and call went well.
 * - `degraded`: connected, but the last list failed or a call timed out.
 * - `down`: not connected; reconnection attempts run in the background.
 */
export type UpstreamHealth = 'connecting' | 'healthy' | 'degraded' | 'down';

/** One imported upstream, as `server.upstreams()` reports it. */
export interface UpstreamStatus {
  /** The configured name. */
  readonly name: string;
  readonly transport: UpstreamTransportType;
  /** Where it is: URL origin and path, or the command; never headers, arguments or environment. */
  readonly target: string;
  readonly health: UpstreamHealth;
  /** When `health` last changed, in ms since the epoch. */
  readonly since: number;
  /** Why it is degraded or down, in words safe to log. */
  readonly lastError: string | undefined;
  /** The names its tools are exposed under now. */
  readonly tools: readonly string[];
  /** When the next reconnection attempt runs, while down. */
  readonly nextRetryAt: number | undefined;
}

const LEVEL: Record<UpstreamHealth, 'info' | 'warn'> = {
  connecting: 'info',
  healthy: 'info',
  degraded: 'warn',
  down: 'warn',
};

/** Holds one upstream's health and logs each change as `upstream.health`. */
export class HealthTracker {
  private current: UpstreamHealth = 'connecting';
  private changedAt: number;
  private error: string | undefined;

  constructor(
    private readonly upstream: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    this.changedAt = now();
  }

  get state(): UpstreamHealth {
    return this.current;
  }

  get since(): number {
    return this.changedAt;
  }

  get lastError(): string | undefined {
    return this.error;
  }

  /** Moves to `next`; logs only when the state changes. `error` must already be redacted. */
  set(next: UpstreamHealth, error?: string): void {
    if (error !== undefined) this.error = error;
    else if (next === 'healthy') this.error = undefined;
    if (next === this.current) return;
    const from = this.current;
    this.current = next;
    this.changedAt = this.now();
    const record = {
      event: 'upstream.health',
      upstream: this.upstream,
      from,
      to: next,
      ...(this.error ? { error: this.error } : {}),
    };
    this.logger[LEVEL[next]](record, `upstream "${this.upstream}" is ${next}`);
  }
}
