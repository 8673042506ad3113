import { parseArgs } from 'node:util';
import { GatewayErrorCode, configError } from './errors.js';

export type Command =
  | { readonly kind: 'serve'; readonly config: string }
  | { readonly kind: 'check'; readonly config: string; readonly json: boolean }
  | { readonly kind: 'schema'; readonly out?: string }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' };

const DEFAULT_CONFIG = 'sluice.config.json';

/** Reads the command line; anything malformed throws `USAGE`. */
export function parseCommandLine(argv: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string', short: 'c' },
        json: { type: 'boolean' },
        out: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    throw configError(GatewayErrorCode.USAGE, error instanceof Error ? error.message : 'cannot read the command line');
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const [name, ...extra] = positionals;
  if (name === undefined) throw configError(GatewayErrorCode.USAGE, 'no command given');
  if (extra.length > 0) throw configError(GatewayErrorCode.USAGE, `unexpected argument "${extra[0]}"`);
  const config = values.config ?? DEFAULT_CONFIG;
  switch (name) {
    case 'serve':
      if (values.out !== undefined) throw configError(GatewayErrorCode.USAGE, '--out applies to schema only');
      if (values.json) throw configError(GatewayErrorCode.USAGE, '--json applies to check only');
      return { kind: 'serve', config };
    case 'check':
      if (values.out !== undefined) throw configError(GatewayErrorCode.USAGE, '--out applies to schema only');
      return { kind: 'check', config, json: values.json ?? false };
    case 'schema':
      if (values.config !== undefined || values.json)
        throw configError(GatewayErrorCode.USAGE, 'schema takes only --out <file>');
      return values.out === undefined ? { kind: 'schema' } : { kind: 'schema', out: values.out };
    case 'help':
      return { kind: 'help' };
    default:
      throw configError(GatewayErrorCode.USAGE, `unknown command "${name}"`);
  }
}
