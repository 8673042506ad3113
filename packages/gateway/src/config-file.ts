import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { GatewayConfig } from './config-schema.js';
import { GatewayErrorCode, configError } from './errors.js';
import type { Environment } from './interpolate.js';
import { interpolateEnv } from './interpolate.js';
import { parseGatewayConfig } from './parse-config.js';

export interface LoadedConfig {
  readonly config: GatewayConfig;
  /** The absolute path of the file. */
  readonly file: string;
  /** Its folder, against which relative paths in it were resolved. */
  readonly baseDir: string;
}

/**
 * Reads a JSON config file, replaces `${VAR}` references from `env`, and
 * validates it. Every failure is a `SluiceError` whose message names the file
 * and, for a bad field, its path; none echoes a value.
 */
export async function loadConfigFile(path: string, env: Environment = process.env): Promise<LoadedConfig> {
  const file = resolve(path);
  const baseDir = dirname(file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw configError(
      GatewayErrorCode.CONFIG_NOT_FOUND,
      `Cannot read the config file ${file}: ${unreadable(error, path)}`,
      error,
    );
  }
  const raw = parseJson(text, file);
  const secrets = new Set<string>();
  const parsed = parseGatewayConfig(interpolateEnv(raw, env, [], secrets), { baseDir, source: file });
  // Every value the environment gave upstreams or the store is hidden from every upstream's text.
  const config =
    secrets.size === 0
      ? parsed
      : {
          ...parsed,
          upstreams: parsed.upstreams.map((upstream) => ({
            ...upstream,
            redact: [...(upstream.redact ?? []), ...secrets],
          })),
        };
  return { config, file, baseDir };
}

/** Why the config file cannot be read, and what to do about it. */
function unreadable(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') {
    return (
      'no such file. Write a starter config with `sluice init' +
      (path === 'sluice.config.json' ? '' : ` --config ${path}`) +
      '`, or name yours with --config <file>'
    );
  }
  if (code === 'EACCES' || code === 'EPERM') {
    const uid = process.getuid?.();
    return (
      `permission denied${uid === undefined ? '' : ` to uid ${uid}`}. ` +
      'Make it readable by the user the gateway runs as (a systemd DynamicUser owns no file: install it with mode 0644, ' +
      'and keep secrets in the environment, named in the config as "${VAR}")'
    );
  }
  return 'it cannot be read';
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    // Only the position: the engine's message may quote the text, which may hold a secret.
    const position = /position (\d+)/.exec(error instanceof Error ? error.message : '');
    const where = position ? ` at ${lineAndColumn(text, Number(position[1]))}` : '';
    throw configError(GatewayErrorCode.CONFIG_NOT_JSON, `The config file ${file} is not valid JSON${where}`);
  }
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}
