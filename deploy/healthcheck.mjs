// The image's HEALTHCHECK: asks /healthz where `docker run -p` and other containers reach the gateway, at the
// container's own network address, not at loopback. A config bound to 127.0.0.1 answers on loopback only, so a
// check on loopback would report healthy a gateway nobody outside the container can reach; this one fails.
// SLUICE_PORT names the port (3000 by default); SLUICE_HEALTHCHECK_HOST overrides the address (a container with
// no network but loopback uses 127.0.0.1). Exits 0 when /healthz answers 2xx within 2.5 s, else 1.
import { networkInterfaces } from 'node:os';

const outside = Object.values(networkInterfaces())
  .flat()
  .find((address) => address !== undefined && !address.internal && address.family === 'IPv4');
const host = process.env.SLUICE_HEALTHCHECK_HOST || outside?.address || '127.0.0.1';
const port = process.env.SLUICE_PORT || '3000';

try {
  const response = await fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(2_500) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
