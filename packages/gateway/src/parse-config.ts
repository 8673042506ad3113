import { isAbsolute, resolve } from 'node:path';
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
export function parseGatewayConfig(input: unknown, options: ParseConfigOptions = {}): GatewayConfig {
  const parsed = GatewayConfig.safeParse(input);
  if (!parsed.success) {
    const where = options.source ? ` in ${options.source}` : '';
    const lines = describeIssues(parsed.error.issues).map((line) => `  ${line}`);
    throw configError(GatewayErrorCode.CONFIG_INVALID, `Invalid gateway config${where}:\n${lines.join('\n')}`);
  }
  return resolvePaths(parsed.data, resolve(options.baseDir ?? process.cwd()));
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
