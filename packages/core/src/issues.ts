import type { z } from 'zod/v4';

type Issue = z.core.$ZodIssue;

/** How `formatIssues` writes paths. */
export interface IssueFormat {
  /** Written before every path, e.g. `['policy']` gives `policy.concurrency.maxActive`. */
  readonly prefix?: readonly PropertyKey[];
  /** Written for an issue at the root when there is no prefix. Default `(options)`. */
  readonly root?: string;
  /** The most issues written. Default all. */
  readonly max?: number;
}

/** A record key's own problem is more useful than zod's "Invalid key in record". */
function messageOf(issue: Issue): string {
  if (issue.code === 'invalid_key' && issue.issues.length > 0)
    return issue.issues.map((inner) => inner.message).join('; ');
  return issue.message;
}

/**
 * Turns zod issues into one line a person can act on: `path: message`, joined
 * with `; `. Messages are zod's or the schema's own, which never echo the
 * value (it may be a secret).
 */
export function formatIssues(error: z.ZodError | readonly Issue[], format: IssueFormat = {}): string {
  const issues = Array.isArray(error) ? (error as readonly Issue[]) : (error as z.ZodError).issues;
  const prefix = format.prefix ?? [];
  return issues
    .slice(0, format.max ?? issues.length)
    .map((issue) => {
      const path = [...prefix, ...issue.path];
      const where = path.length > 0 ? path.map(String).join('.') : (format.root ?? '(options)');
      return `${where}: ${messageOf(issue)}`;
    })
    .join('; ');
}
