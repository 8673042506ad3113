/** Where an upstream runs, as far as the connection tells. */
export type HostClass = 'IN_PROCESS' | 'STDIO' | 'LOOPBACK' | 'PRIVATE_LAN' | 'PUBLIC';

export type TransportKind = 'stdio' | 'http' | 'sse' | 'in-process';

/** True for hosts reached over a network that is not this machine's loopback. */
export function isRemote(host: HostClass): boolean {
  return host === 'PRIVATE_LAN' || host === 'PUBLIC';
}

/**
 * Classifies an upstream's host. A network transport whose URL is missing or
 * does not parse is PUBLIC: what cannot be placed is treated as far away.
 */
export function classifyHost(transport: TransportKind | undefined, url: string | undefined): HostClass {
  if (transport === 'stdio') return 'STDIO';
  if (transport === 'in-process') return 'IN_PROCESS';
  const hostname = hostnameOf(url);
  return hostname === undefined ? 'PUBLIC' : classifyHostname(hostname);
}

function hostnameOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host.startsWith('[') ? host.slice(1, -1) : host.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

export function classifyHostname(host: string): HostClass {
  if (host.includes(':')) return classifyIpv6(host);
  const v4 = parseIpv4(host);
  if (v4) return classifyIpv4(v4);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'LOOPBACK';
  // A single-label name only resolves through a local resolver or search domain.
  if (!host.includes('.')) return 'PRIVATE_LAN';
  if (PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix))) return 'PRIVATE_LAN';
  return 'PUBLIC';
}

const PRIVATE_SUFFIXES = ['.local', '.internal', '.lan', '.home.arpa', '.intranet', '.corp'];

function parseIpv4(host: string): number[] | undefined {
  const parts = host.split('.');
  if (parts.length !== 4) return undefined;
  const octets = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return octets.every((o) => o >= 0 && o <= 255) ? octets : undefined;
}

function classifyIpv4([a, b]: number[]): HostClass {
  if (a === 127 || a === 0) return 'LOOPBACK';
  if (a === 10) return 'PRIVATE_LAN';
  if (a === 172 && b !== undefined && b >= 16 && b <= 31) return 'PRIVATE_LAN';
  if (a === 192 && b === 168) return 'PRIVATE_LAN';
  if (a === 169 && b === 254) return 'PRIVATE_LAN';
  // Shared address space (carrier-grade NAT), never routed on the internet.
  if (a === 100 && b !== undefined && b >= 64 && b <= 127) return 'PRIVATE_LAN';
  return 'PUBLIC';
}

function classifyIpv6(host: string): HostClass {
  if (host === '::1' || host === '::') return 'LOOPBACK';
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const high = Number.parseInt(mapped[1] as string, 16);
    const low = Number.parseInt(mapped[2] as string, 16);
    return classifyIpv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  }
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (dotted) return classifyHostname(dotted[1] as string);
  const first = Number.parseInt(host.split(':')[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return 'PRIVATE_LAN'; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return 'PRIVATE_LAN'; // link-local fe80::/10
  return 'PUBLIC';
}
