import type { z } from 'zod';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/**
 * Turns zod issues into lines a person can act on, each starting with the
 * path of the bad field (`upstreams.0.connection.url: ...`). A union whose
 * value had the right shape for one branch reports that branch's problem
 * rather than "Invalid input". Messages never echo the value: it may be a
 * secret read from the environment.
 */
export function describeIssues(issues: readonly Issue[], base: Path = []): string[] {
  return issues.flatMap((issue) => describeIssue(issue, [...base, ...issue.path]));
}

function describeIssue(issue: Issue, path: Path): string[] {
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((key) => `${pathText([...path, key])}: unknown field (check its spelling)`);
  if (issue.code === 'invalid_union' && issue.errors.length > 0)
    return describeUnion(issue.errors, path, issue.message);
  return [`${pathText(path)}: ${issue.message}`];
}

/** Branches where the value failed only at the top, for being of another kind altogether. */
function isShapeMismatch(branch: readonly Issue[]): boolean {
  return branch.every(
    (issue) => issue.path.length === 0 && (issue.code === 'invalid_type' || issue.code === 'invalid_value'),
  );
}

function describeUnion(branches: readonly (readonly Issue[])[], path: Path, fallback: string): string[] {
  const near = branches.filter((branch) => !isShapeMismatch(branch));
  if (near.length === 1) return describeIssues(near[0] as readonly Issue[], path);
  const expected = branches
    .flatMap((branch) => branch.map(expectation))
    .filter((text): text is string => text !== undefined);
  return [`${pathText(path)}: ${expected.length > 0 ? `expected ${[...new Set(expected)].join(' or ')}` : fallback}`];
}

function expectation(issue: Issue): string | undefined {
  if (issue.code === 'invalid_type') return issue.expected;
  if (issue.code === 'invalid_value') return issue.values.map((value) => JSON.stringify(value)).join(' or ');
  return undefined;
}

function pathText(path: Path): string {
  return path.length === 0 ? '(config)' : path.map((part) => String(part)).join('.');
}
