import type { RequestListener, ServerResponse } from 'node:http';
import type { UpstreamStatus } from '@sluice/core';

/** When `/readyz` says the gateway may take traffic. */
export type ReadyRule = 'anyUpstream' | 'allUpstreams' | 'listening';

/** The paths the health endpoints answer on. */
export const HealthPath = Object.freeze({ LIVE: '/healthz', READY: '/readyz' } as const);

/** What the gateway knows about itself, read at each probe. */
export interface HealthState {
  readonly draining: boolean;
  readonly listening: boolean;
  readonly upstreams: readonly UpstreamStatus[];
}

/** A readiness verdict: counts only, so that an unauthenticated probe learns no names, targets or errors. */
export interface Readiness {
  readonly ready: boolean;
  readonly reason: string;
  readonly upstreams: { readonly up: number; readonly total: number };
}

const isUp = (upstream: UpstreamStatus): boolean => upstream.health === 'healthy' || upstream.health === 'degraded';

/**
 * Whether the gateway should take traffic: never while draining or before it
 * listens; then, by the rule, when at least one upstream answers (or there are
 * none), when all do, or as soon as it listens.
 */
export function readiness(state: HealthState, rule: ReadyRule): Readiness {
  const total = state.upstreams.length;
  const up = state.upstreams.filter(isUp).length;
  const upstreams = { up, total };
  if (state.draining) return { ready: false, reason: 'draining', upstreams };
  if (!state.listening) return { ready: false, reason: 'starting', upstreams };
  if (rule === 'anyUpstream' && total > 0 && up === 0)
    return { ready: false, reason: 'every upstream is down', upstreams };
  if (rule === 'allUpstreams' && up < total) return { ready: false, reason: 'an upstream is down', upstreams };
  return { ready: true, reason: 'ready', upstreams };
}

/** `/healthz` (the process answers) and `/readyz` (503 unless `readiness()` says ready). */
export function healthRoutes(state: () => HealthState, rule: ReadyRule): Record<string, RequestListener> {
  return {
    [HealthPath.LIVE]: (req, res) => answer(res, req.method, 200, { status: 'ok' }),
    [HealthPath.READY]: (req, res) => {
      const verdict = readiness(state(), rule);
      answer(res, req.method, verdict.ready ? 200 : 503, verdict);
    },
  };
}

function answer(res: ServerResponse, method: string | undefined, status: number, body: object): void {
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'use GET' }));
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(method === 'HEAD' ? undefined : JSON.stringify(body));
}
