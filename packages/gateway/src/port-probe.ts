import { createServer } from 'node:net';

/**
 * Binds `host:port` and lets it go again, so that a taken port is found
 * before any upstream is spawned (a stdio upstream may take long to start).
 * Rejects with the bind's own error (`EADDRINUSE`, `EACCES`). Port 0 (any
 * free port) cannot be taken and is not probed.
 */
export async function probePort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
