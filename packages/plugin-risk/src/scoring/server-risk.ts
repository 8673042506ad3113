import { z } from 'zod';
import type { CatalogEntry, Docs, TrustTier } from './catalog.js';
import { DocsSchema, TrustTierSchema, findCatalogEntry, matchCatalog } from './catalog.js';
import type { HostClass } from './host-class.js';
import { classifyHost, isRemote } from './host-class.js';
import type { RiskLevel } from './levels.js';
import { bucket } from './levels.js';

export const AuthKindSchema = z
  .enum(['none', 'oauth', 'oauth-custom', 'api-key', 'bearer'])
  .describe(
    'How the client authenticates: `none` and `oauth` (the standard flow) 0, `api-key` and `bearer` 1, `oauth-custom` (anything home-grown) 2 points; stdio, in-process and loopback score 0 whatever it is.',
  );
export type AuthKind = z.infer<typeof AuthKindSchema>;

/** How the server authenticates this client. `oauth` is the standard flow; `oauth-custom` anything home-grown. */
export const AuthSchema = z
  .object({
    kind: AuthKindSchema,
    /** OAuth scopes granted; privileged ones trip a floor. */
    scopes: z
      .array(z.string())
      .optional()
      .describe(
        'OAuth scopes granted; a privileged one (containing `admin`, `write_all`, `delete_*` or `.all`) sends the server to L5.',
      ),
  })
  .strict();

/** What the operator says about one upstream. Fields left out are derived from the import where possible. */
export const ServerConfigSchema = z
  .object({
    transport: z
      .enum(['stdio', 'http', 'sse', 'in-process'])
      .optional()
      .describe("How the upstream is reached; with `url`, decides the host class. Default: the import's connection."),
    /** The endpoint of an `http` or `sse` upstream: its host decides the host class. */
    url: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The endpoint of an `http` or `sse` upstream: its host decides the host class (loopback, private LAN, public) and is matched against catalog `hosts`. Default: the import's URL.",
      ),
    /** The command line of a `stdio` upstream, matched against catalog `commands`. */
    command: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The command line of a `stdio` upstream, matched against catalog `commands`. Default: the import's command and arguments.",
      ),
    auth: AuthSchema.optional().describe(
      "How the upstream authenticates this client. Default: read from the import's request headers (`Authorization`: bearer; an API-key header: api-key), else `none`.",
    ),
    /** The id of the catalog entry this upstream was chosen from. */
    catalog: z
      .string()
      .min(1)
      .optional()
      .describe('The `id` of the catalog entry this upstream was picked from: its trust and docs apply.'),
    /** The operator vouches for this upstream as a catalog would. */
    trust: TrustTierSchema.optional().describe(
      'The operator vouches for this upstream as a catalog would: `vendor-official`, `community-curated` or `unknown`.',
    ),
    docs: DocsSchema.optional().describe(
      "What is known about the upstream's documentation, merged over its catalog entry's: each gap adds a doc point (at most 2).",
    ),
    /** Whether the server can write. Default: derived from its tools (any tool not marked read-only). */
    writes: z
      .boolean()
      .optional()
      .describe('Whether the server can write. Default: derived from its tools (any tool not marked read-only).'),
  })
  .strict();
export type ServerConfig = z.input<typeof ServerConfigSchema>;

/** The server floor overrides: each sends the server straight to L5. */
export const ServerFloor = Object.freeze({
  NO_AUTH_WRITE: 'non_loopback_no_auth_write_capability',
  NO_AUTH_UNKNOWN: 'non_loopback_no_auth_trust_unknown',
  PRIVILEGED_SCOPE: 'privileged_oauth_scope',
} as const);
export type ServerFloor = (typeof ServerFloor)[keyof typeof ServerFloor];

/** Where the trust axis got its answer. */
export type TrustOrigin = 'operator' | 'catalog' | 'host-match' | 'none';

export interface ServerAssessment {
  readonly level: RiskLevel;
  /** The sum of the four axes. */
  readonly total: number;
  readonly axes: { readonly transport: number; readonly auth: number; readonly trust: number; readonly doc: number };
  readonly hostClass: HostClass;
  readonly trust: { readonly tier: TrustTier; readonly origin: TrustOrigin; readonly catalogId?: string };
  /** Floor overrides that tripped; any one makes the level L5. */
  readonly floors: readonly ServerFloor[];
}

export interface ServerContext {
  readonly catalog?: readonly CatalogEntry[];
  /** Epoch milliseconds for the staleness check. Default: now. */
  readonly now?: number;
}

const STALE_AFTER_MS = 90 * 24 * 60 * 60 * 1000;
const LOCAL_HOSTS: readonly HostClass[] = ['STDIO', 'IN_PROCESS', 'LOOPBACK'];

/** Scores an upstream on transport, auth, trust and documentation, then applies the floors. */
export function assessServer(config: ServerConfig, context: ServerContext = {}): ServerAssessment {
  const catalog = context.catalog ?? [];
  const hostClass = classifyHost(config.transport, config.url);
  const trust = resolveTrust(config, catalog);
  const authKind = config.auth?.kind ?? 'none';
  const axes = {
    transport: hostClass === 'PRIVATE_LAN' ? 1 : 0,
    auth: LOCAL_HOSTS.includes(hostClass) ? 0 : authScore(authKind),
    trust: trustScore(trust.origin, trust.tier),
    doc: docScore({ ...trust.entry?.docs, ...config.docs }, context.now ?? Date.now()),
  };
  const floors = serverFloors(config, hostClass, authKind, axes.trust);
  const total = axes.transport + axes.auth + axes.trust + axes.doc;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the registry entry is taken out so that the report does not carry it
  const { entry, ...trustOut } = trust;
  return { level: floors.length > 0 ? 'L5' : bucket(total), total, axes, hostClass, trust: trustOut, floors };
}

interface ResolvedTrust {
  tier: TrustTier;
  origin: TrustOrigin;
  catalogId?: string;
  entry?: CatalogEntry;
}

function resolveTrust(config: ServerConfig, catalog: readonly CatalogEntry[]): ResolvedTrust {
  const chosen = config.catalog === undefined ? undefined : findCatalogEntry(catalog, config.catalog);
  if (config.trust !== undefined)
    return { tier: config.trust, origin: 'operator', ...(chosen ? { catalogId: chosen.id, entry: chosen } : {}) };
  if (chosen) return { tier: chosen.trust, origin: 'catalog', catalogId: chosen.id, entry: chosen };
  const matched = matchCatalog(catalog, config);
  if (matched) return { tier: matched.trust, origin: 'host-match', catalogId: matched.id, entry: matched };
  return { tier: 'unknown', origin: 'none' };
}

function trustScore(origin: TrustOrigin, tier: TrustTier): number {
  if (origin === 'none') return 2;
  // A hand-typed address that merely matches a catalog host is half-vouched for.
  if (origin === 'host-match') return 1;
  return tier === 'vendor-official' ? 0 : tier === 'community-curated' ? 1 : 2;
}

function authScore(kind: AuthKind): number {
  if (kind === 'api-key' || kind === 'bearer') return 1;
  if (kind === 'oauth-custom') return 2;
  return 0;
}

function docScore(docs: Docs, now: number): number {
  let points = 0;
  if (docs.url === undefined) points++;
  if (docs.adequate === false) points++;
  if (docs.lastUsedAt !== undefined && now - Date.parse(docs.lastUsedAt) > STALE_AFTER_MS) points++;
  return Math.min(points, 2);
}

function serverFloors(config: ServerConfig, host: HostClass, auth: AuthKind, trust: number): ServerFloor[] {
  const floors: ServerFloor[] = [];
  const openRemote = isRemote(host) && auth === 'none';
  // Unknown write capability counts as writing: a server nobody described may do anything.
  if (openRemote && config.writes !== false) floors.push(ServerFloor.NO_AUTH_WRITE);
  if (openRemote && trust === 2) floors.push(ServerFloor.NO_AUTH_UNKNOWN);
  if ((config.auth?.scopes ?? []).some(isPrivilegedScope)) floors.push(ServerFloor.PRIVILEGED_SCOPE);
  return floors;
}

/** Scopes that grant administration or blanket write/delete: `admin`, `write_all`, `delete_*`, `*.all`, `*.admin`. */
export function isPrivilegedScope(scope: string): boolean {
  const lower = scope.toLowerCase();
  if (lower.includes('admin') || lower.includes('write_all')) return true;
  return lower.split(/[.:/\s]/).some((part) => part === 'all' || part.startsWith('delete_'));
}
