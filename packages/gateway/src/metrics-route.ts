import type { RequestListener } from 'node:http';
import { identityOf } from '@sluice/core';
import type { RouteRequest } from '@sluice/http';
import type { GatewayMetrics } from './call-metrics.js';
import { processMetrics } from './process-metrics.js';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus.js';

/** Serves a scrape: GET (or HEAD) gets the exposition (the gateway's families, then the process's), anything else 405. */
export function metricsRoute(metrics: GatewayMetrics): RequestListener {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('Method not allowed\n');
      return;
    }
    const send = (body: string): void => {
      res.writeHead(200, {
        'content-type': PROMETHEUS_CONTENT_TYPE,
        'cache-control': 'no-store',
        'content-length': Buffer.byteLength(body),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const own = metrics.render();
    // A collector that failed must not cost the gateway's own metrics.
    processMetrics().then(
      (process) => send(own + process),
      () => send(own),
    );
  };
}

/**
 * A scrape on the MCP listener: a verified caller needs every scope of one of
 * `grants` (the metrics scopes, the admin scopes), else 403. An unauthenticated
 * listener's callers pass, as they pass its MCP endpoint.
 */
export function scopedScrape(scrape: RequestListener, grants: ReadonlyArray<readonly string[]>): RequestListener {
  return (req, res) => {
    const identity = identityOf((req as RouteRequest).auth);
    const granted = identity === undefined || grants.some((scopes) => scopes.every((s) => identity.scopes.includes(s)));
    if (granted) {
      scrape(req, res);
      return;
    }
    const [metricsScopes = []] = grants;
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end(
      `Forbidden: metrics need the scope ${metricsScopes.join(', ')} (telemetry.metricsScopes), or the admin scopes\n`,
    );
  };
}
