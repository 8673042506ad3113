import { z } from 'zod';
import { matchGlob } from '@sluice/core';

/** How far a catalog vouches for a server. */
export const TrustTierSchema = z
  .enum(['vendor-official', 'community-curated', 'unknown'])
  .describe('How far the server is trusted: `vendor-official` 0, `community-curated` 1, `unknown` 2 points of risk.');
export type TrustTier = z.infer<typeof TrustTierSchema>;

/** What is known about a server's documentation. */
export const DocsSchema = z
  .object({
    /** Where the server documents its tools. Missing: one doc point. */
    url: z.string().min(1).optional().describe('Where the server documents its tools. Missing: one doc point.'),
    /** `false` when a reviewer found the docs inadequate: one doc point. */
    adequate: z.boolean().optional().describe('`false` when a reviewer found the docs inadequate: one doc point.'),
    /** When the server was last used or reviewed (ISO 8601). Older than 90 days: one doc point. */
    lastUsedAt: z.iso
      .datetime({ offset: true })
      .or(z.iso.date())
      .optional()
      .describe(
        'When the server was last used or reviewed (ISO 8601 date or date-time). Over 90 days ago: one doc point.',
      ),
  })
  .strict()
  .describe("What is known about the server's documentation: each gap adds a doc point (at most 2).");
export type Docs = z.infer<typeof DocsSchema>;

/** A known server: how far it is trusted, and how to recognise it. */
export const CatalogEntrySchema = z
  .object({
    id: z.string().min(1).describe("The entry's id, unique in the catalog; a `servers` entry names it in `catalog`."),
    trust: TrustTierSchema,
    /** Host name globs (`*.example.com`) that identify this server's URLs. */
    hosts: z
      .array(z.string().min(1))
      .optional()
      .describe("Host name globs (`*.example.com`, case-insensitive) that identify this server's URLs."),
    /** Command-line globs (`npx -y @acme/mcp-server*`) that identify it over stdio. */
    commands: z
      .array(z.string().min(1))
      .optional()
      .describe('Command-line globs (`npx -y @acme/mcp-server*`, case-insensitive) that identify it over stdio.'),
    docs: DocsSchema.optional(),
  })
  .strict();
export type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

/** The catalog entry whose host or command patterns match a connection. */
export function matchCatalog(
  catalog: readonly CatalogEntry[],
  connection: { readonly url?: string | undefined; readonly command?: string | undefined },
): CatalogEntry | undefined {
  const host = hostOf(connection.url);
  return catalog.find(
    (entry) =>
      (host !== undefined && anyGlob(entry.hosts, host)) ||
      (connection.command !== undefined && anyGlob(entry.commands, connection.command)),
  );
}

export function findCatalogEntry(catalog: readonly CatalogEntry[], id: string): CatalogEntry | undefined {
  return catalog.find((entry) => entry.id === id);
}

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Host names and command lines are not tool names: they keep the core's plain glob, case-insensitive. */
function anyGlob(patterns: readonly string[] | undefined, text: string): boolean {
  if (!patterns || patterns.length === 0) return false;
  const lower = text.toLowerCase();
  return patterns.some((pattern) => matchGlob(pattern.toLowerCase(), lower));
}
