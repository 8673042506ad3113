import type { Clock, Logger } from '@sluice/core';
import { RiskEvent } from './events.js';

const LOG_METHODS: ReadonlySet<string> = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** One upstream's share of the plugin's lines: at most `maxLines` per `windowMs`. */
export interface LineShare {
  readonly maxLines: number;
  readonly windowMs: number;
}

/** One upstream's lines in the current window. */
interface Window {
  /** When the window began (epoch ms). */
  readonly start: number;
  count: number;
  /** Lines left out that said a tool was held or revoked. */
  holds: number;
}

/**
 * Each upstream's share of the lines the plugin writes about what it lists:
 * risk levels, scan hits, mismatches, holds, removals. An upstream that
 * redefines or renames its tools on a timer would otherwise fill the log
 * (and its disk) with a line per tool per listing. Past the share a line is
 * left out, and once the window has ended one `UpstreamLinesSuppressed` line
 * says how many. A line is charged to the upstream it names (`server`, up to
 * a `#`: an upstream's prompts are `<upstream>#prompts`); lines naming no
 * upstream, or an exempt source, pass; a line the logger would drop costs
 * nothing. Counted in this process: log lines are this process's too. An
 * upstream can spend its share on lines of its choosing before a hold it
 * would rather hide; the summary counts the holds among the lines left out,
 * and the ledger lists every hold whatever the log kept.
 */
export class UpstreamLines {
  /** The logger to hand the parts that log what upstreams list. */
  readonly logger: Logger;
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly base: Logger,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout'>,
    private readonly share: LineShare,
    private readonly exempt: ReadonlySet<string> = new Set(),
  ) {
    this.logger = this.budgeted(base);
  }

  private budgeted(target: Logger): Logger {
    return new Proxy(target, {
      get: (logger, property, receiver) => {
        const value: unknown = Reflect.get(logger, property, receiver);
        if (typeof value !== 'function') return value;
        if (property === 'child')
          return (bindings: object, options?: object) => this.budgeted(logger.child(bindings, options));
        if (typeof property !== 'string' || !LOG_METHODS.has(property))
          return (value as (...args: unknown[]) => unknown).bind(logger);
        return (...args: unknown[]) => {
          if (!logger.isLevelEnabled(property)) return;
          const upstream = upstreamOf(args[0]);
          if (upstream !== undefined && !this.exempt.has(upstream) && !this.admit(upstream, isHold(args[0]))) return;
          (value as (...a: unknown[]) => void).apply(logger, args);
        };
      },
    });
  }

  /** Whether one more line about the upstream fits in its share now; counted either way. */
  private admit(upstream: string, hold: boolean): boolean {
    const { maxLines, windowMs } = this.share;
    const start = Math.floor(this.clock.now() / windowMs) * windowMs;
    let window = this.windows.get(upstream);
    if (window === undefined || window.start !== start) {
      window = { start, count: 0, holds: 0 };
      this.windows.set(upstream, window);
    }
    window.count++;
    if (window.count === maxLines + 1) this.schedule(upstream, window);
    if (window.count <= maxLines) return true;
    if (hold) window.holds++;
    return false;
  }

  private schedule(upstream: string, window: Window): void {
    const delay = window.start + this.share.windowMs - this.clock.now();
    const timer = this.clock.setTimeout(() => this.report(upstream, window), delay);
    // A summary never keeps a process alive.
    timer.unref?.();
  }

  private report(upstream: string, window: Window): void {
    const { maxLines, windowMs } = this.share;
    const count = window.count - maxLines;
    const since = new Date(window.start).toISOString();
    const span = windowMs === 60_000 ? 'minute' : `${windowMs / 1_000} s`;
    const rate = windowMs === 60_000 ? 'a minute' : `per ${span}`;
    const { holds } = window;
    const held = holds === 0 ? '' : `, ${holds} of them holds (the ledger lists every hold)`;
    this.base.warn(
      { event: RiskEvent.UPSTREAM_LINES_SUPPRESSED, server: upstream, count, holds, since, limit: maxLines, windowMs },
      `${count} more lines about upstream "${upstream}" left out in the ${span} from ${since} (at most ${maxLines} ${rate})${held}`,
    );
  }
}

/** Whether a line says a tool was held or revoked. */
function isHold(fields: unknown): boolean {
  if (typeof fields !== 'object' || fields === null) return false;
  const { event, phase } = fields as { event?: unknown; phase?: unknown };
  return event === RiskEvent.COMPOSITION_LIFECYCLE && (phase === 'held' || phase === 'revoked');
}

/** The upstream a line is about: its `server` field, up to a `#`. */
function upstreamOf(fields: unknown): string | undefined {
  if (typeof fields !== 'object' || fields === null) return undefined;
  const server = (fields as { server?: unknown }).server;
  if (typeof server !== 'string') return undefined;
  const cut = server.indexOf('#');
  return cut === -1 ? server : server.slice(0, cut);
}
