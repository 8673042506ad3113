import { isAbsolute, resolve } from 'node:path';
import type { z } from 'zod';
import { GatewayConfig } from './config-schema.js';
import type { UpstreamConfig } from './config-schema.js';
import { describeIssues } from './config-issues.js';
import { GatewayErrorCode, configError } from './errors.js';

export interface ParseConfigOptions {
  /** The folder relative paths resolve against: the config file's folder. Default: the working directory. */
  readonly baseDir?: string;
  /** Names the config in error messages, e.g. its file path. */
  readonly source?: string;
}

/**
 * Validates a gateway config and fills in its defaults. Bad fields throw
 * `CONFIG_INVALID` with one line per problem, each naming the field's path.
 * Relative paths (a stdio upstream's `cwd` and a `./command`, the risk
 * ledger file) resolve against `baseDir`; a stdio upstream without `cwd`
 * runs in `baseDir`, so relative `args` resolve there too.
 */
/** Parsed once per config: zod's compiled fast path for object schemas would cost more than it saves. */
const ONCE = Object.freeze({ jitless: true });

export function parseGatewayConfig(input: unknown, options: ParseConfigOptions = {}): GatewayConfig {
  let parsed = GatewayConfig.safeParse(input, ONCE);
  // `${VAR}` substitution yields strings: a number or boolean field takes "8" or "true" for one.
  for (let round = 0; round < 3 && !parsed.success; round++) {
    const coerced = coerceScalars(input, parsed.error.issues);
    if (coerced === undefined) break;
    input = coerced;
    parsed = GatewayConfig.safeParse(input, ONCE);
  }
  if (!parsed.success) {
    const where = options.source ? ` in ${options.source}` : '';
    const lines = describeIssues(parsed.error.issues).map((line) => `  ${line}`);
    throw configError(GatewayErrorCode.CONFIG_INVALID, `Invalid gateway config${where}:\n${lines.join('\n')}`);
  }
  return resolvePaths(parsed.data, resolve(options.baseDir ?? process.cwd()));
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The input with each string the schema wanted as a number or boolean converted, or undefined if none could be. */
function coerceScalars(input: unknown, issues: readonly z.core.$ZodIssue[]): unknown {
  let out = input;
  let changed = false;
  for (const issue of issues) {
    if (issue.code !== 'invalid_type') continue;
    const value = valueAt(out, issue.path);
    if (typeof value !== 'string') continue;
    const text = value.trim();
    let scalar: number | boolean | undefined;
    if ((issue.expected === 'number' || issue.expected === 'int') && NUMBER.test(text)) scalar = Number(text);
    if (issue.expected === 'boolean' && (text === 'true' || text === 'false')) scalar = text === 'true';
    if (scalar === undefined) continue;
    out = withValueAt(out, issue.path, scalar);
    changed = true;
  }
  return changed ? out : undefined;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** A copy of `root` with one value replaced, copying only the objects along the path (own keys only, `__proto__` kept plain). */
function withValueAt(root: unknown, path: readonly PropertyKey[], value: unknown): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return value;
  const node = root as Record<PropertyKey, unknown>;
  const copy = (Array.isArray(node) ? [...(node as unknown[])] : {}) as Record<PropertyKey, unknown>;
  if (!Array.isArray(node)) {
    for (const own of Object.keys(node)) {
      Object.defineProperty(copy, own, { value: node[own], enumerable: true, writable: true, configurable: true });
    }
  }
  Object.defineProperty(copy, key, {
    value: withValueAt(node[key], rest, value),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}

function resolvePaths(config: GatewayConfig, baseDir: string): GatewayConfig {
  const risk = config.plugins.risk;
  return {
    ...config,
    upstreams: config.upstreams.map((upstream) => resolveUpstream(upstream, baseDir)),
    plugins: {
      ...config.plugins,
      ...(risk ? { risk: { ...risk, ledger: { ...risk.ledger, path: resolve(baseDir, risk.ledger.path) } } } : {}),
    },
  };
}

function resolveUpstream(upstream: UpstreamConfig, baseDir: string): UpstreamConfig {
  const connection = upstream.connection;
  if (connection.type !== 'stdio') return upstream;
  // A bare name (`node`, `npx`) is looked up on PATH; only an explicit relative path is the config's.
  const explicitlyRelative = /^\.\.?[\\/]/.test(connection.command);
  const command = explicitlyRelative ? resolve(baseDir, connection.command) : connection.command;
  const cwd =
    connection.cwd === undefined
      ? baseDir
      : isAbsolute(connection.cwd)
        ? connection.cwd
        : resolve(baseDir, connection.cwd);
  return { ...upstream, connection: { ...connection, command, cwd } };
}
