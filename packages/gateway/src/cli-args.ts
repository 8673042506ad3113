import { parseArgs } from 'node:util';
import { LogFormat, LogLevel } from './config-schema.js';
import { GatewayErrorCode, configError } from './errors.js';
import type { LedgerAction, LedgerCommand } from './ledger-command.js';
import type { ApprovalsAction, ApprovalsCommand } from './approvals-command.js';
import type { CredentialsAction, CredentialsCommand } from './credentials-command.js';
import type { AuditAction, AuditCommand } from './audit-command.js';
import { CREATE_KINDS } from './create-command.js';
import type { CreateKind } from './create-command.js';

/** `--log-format` and `--log-level`, over the config's `logFormat` and `logLevel`. */
export interface LogFlags {
  readonly logFormat?: LogFormat;
  readonly logLevel?: LogLevel;
}

export type Command =
  | ({ readonly kind: 'serve'; readonly config: string } & LogFlags)
  | { readonly kind: 'check'; readonly config: string; readonly json: boolean }
  | { readonly kind: 'schema'; readonly out?: string }
  | { readonly kind: 'init'; readonly config: string; readonly force: boolean }
  | { readonly kind: 'create'; readonly what: CreateKind; readonly name: string; readonly dir?: string }
  | ({ readonly kind: 'ledger'; readonly config: string } & LedgerCommand)
  | ({ readonly kind: 'approvals'; readonly config: string } & ApprovalsCommand)
  | ({ readonly kind: 'credentials'; readonly config: string } & CredentialsCommand)
  | ({ readonly kind: 'audit'; readonly config: string } & AuditCommand)
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
        force: { type: 'boolean' },
        out: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        'log-format': { type: 'string' },
        'log-level': { type: 'string' },
        url: { type: 'string' },
        reason: { type: 'string' },
        upstream: { type: 'string' },
        subject: { type: 'string' },
        after: { type: 'string' },
        dir: { type: 'string' },
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
  if (name !== 'init' && values.force) throw configError(GatewayErrorCode.USAGE, '--force applies to init only');
  if (name !== 'approvals' && values.reason !== undefined)
    throw configError(GatewayErrorCode.USAGE, '--reason applies to approvals only');
  if (name !== 'credentials' && (values.upstream !== undefined || values.subject !== undefined))
    throw configError(GatewayErrorCode.USAGE, '--upstream and --subject apply to credentials only');
  if (name !== 'audit' && values.after !== undefined)
    throw configError(GatewayErrorCode.USAGE, '--after applies to audit export only');
  if (name !== 'create' && values.dir !== undefined)
    throw configError(GatewayErrorCode.USAGE, '--dir applies to create only');
  if (name === 'create') return createCommand(values, extra);
  if (name === 'credentials') return credentialsCommand(values, extra);
  if (name === 'audit') return auditCommand(values, extra);
  if (name === 'ledger') return ledgerCommand(values, extra);
  if (name === 'approvals') return approvalsCommand(values, extra);
  if (extra.length > 0) throw configError(GatewayErrorCode.USAGE, `unexpected argument "${extra[0]}"`);
  if (values.url !== undefined)
    throw configError(GatewayErrorCode.USAGE, '--url applies to ledger, approvals, credentials and audit only');
  const config = values.config ?? DEFAULT_CONFIG;
  if (name !== 'serve' && (values['log-format'] !== undefined || values['log-level'] !== undefined))
    throw configError(GatewayErrorCode.USAGE, '--log-format and --log-level apply to serve only');
  switch (name) {
    case 'serve':
      if (values.out !== undefined) throw configError(GatewayErrorCode.USAGE, '--out applies to schema only');
      if (values.json) throw configError(GatewayErrorCode.USAGE, '--json applies to check only');
      return { kind: 'serve', config, ...logFlags(values['log-format'], values['log-level']) };
    case 'check':
      if (values.out !== undefined) throw configError(GatewayErrorCode.USAGE, '--out applies to schema only');
      return { kind: 'check', config, json: values.json ?? false };
    case 'schema':
      if (values.config !== undefined || values.json)
        throw configError(GatewayErrorCode.USAGE, 'schema takes only --out <file>');
      return values.out === undefined ? { kind: 'schema' } : { kind: 'schema', out: values.out };
    case 'init':
      if (values.out !== undefined || values.json || values['log-format'] !== undefined)
        throw configError(GatewayErrorCode.USAGE, 'init takes --config <file> and --force');
      return { kind: 'init', config, force: values.force ?? false };
    case 'help':
      return { kind: 'help' };
    default:
      throw configError(GatewayErrorCode.USAGE, `unknown command "${name}"`);
  }
}

function createCommand(values: Record<string, unknown>, args: readonly string[]): Command {
  const { dir, ...others } = values;
  const extra = Object.keys(others).filter((flag) => others[flag] !== undefined);
  if (extra.length > 0)
    throw configError(GatewayErrorCode.USAGE, `create takes only --dir <folder>, not --${extra[0]}`);
  const [what, name, ...more] = args;
  const kind = CREATE_KINDS.find((k) => k === what);
  if (kind === undefined) throw configError(GatewayErrorCode.USAGE, `create takes one of ${CREATE_KINDS.join(', ')}`);
  if (name === undefined || more.length > 0)
    throw configError(GatewayErrorCode.USAGE, `create ${kind} takes one package name, such as @acme/sluice-guard`);
  if (typeof dir === 'string' && dir.trim() === '') throw configError(GatewayErrorCode.USAGE, '--dir takes a folder');
  return { kind: 'create', what: kind, name, ...(typeof dir === 'string' ? { dir } : {}) };
}

function logFlags(format: string | undefined, level: string | undefined): LogFlags {
  const flags: { logFormat?: LogFormat; logLevel?: LogLevel } = {};
  if (format !== undefined) flags.logFormat = oneOf(LogFormat, format, '--log-format');
  if (level !== undefined) flags.logLevel = oneOf(LogLevel, level, '--log-level');
  return flags;
}

function oneOf<T extends string>(schema: { options: readonly T[] }, value: string, flag: string): T {
  const match = schema.options.find((option) => option === value);
  if (match === undefined) throw configError(GatewayErrorCode.USAGE, `${flag} takes ${schema.options.join(', ')}`);
  return match;
}

const LEDGER_ACTIONS: readonly LedgerAction[] = ['list', 'diff', 'approve', 'revoke'];

interface AdminFlags {
  config?: string;
  json?: boolean;
  url?: string;
  out?: string;
  reason?: string;
  'log-format'?: string;
  'log-level'?: string;
}

function ledgerCommand(values: AdminFlags, args: readonly string[]): Command {
  if (values.reason !== undefined) throw configError(GatewayErrorCode.USAGE, '--reason applies to approvals only');
  if (values.out !== undefined || values['log-format'] !== undefined || values['log-level'] !== undefined)
    throw configError(GatewayErrorCode.USAGE, 'ledger takes --config, --url and --json');
  const [action, tool, ...extra] = args;
  const known = LEDGER_ACTIONS.find((a) => a === action);
  if (known === undefined)
    throw configError(GatewayErrorCode.USAGE, `ledger takes one of ${LEDGER_ACTIONS.join(', ')}`);
  if (known === 'list' ? tool !== undefined : tool === undefined || extra.length > 0)
    throw configError(
      GatewayErrorCode.USAGE,
      known === 'list' ? 'ledger list takes no tool' : `ledger ${known} takes one tool`,
    );
  return {
    kind: 'ledger',
    config: values.config ?? DEFAULT_CONFIG,
    action: known,
    json: values.json ?? false,
    ...(tool === undefined ? {} : { tool }),
    ...(values.url === undefined ? {} : { url: values.url }),
  };
}

const APPROVALS_ACTIONS: readonly ApprovalsAction[] = ['list', 'approve', 'deny'];

function approvalsCommand(values: AdminFlags, args: readonly string[]): Command {
  if (values.out !== undefined || values['log-format'] !== undefined || values['log-level'] !== undefined)
    throw configError(GatewayErrorCode.USAGE, 'approvals takes --config, --url, --reason and --json');
  const [action, id, ...extra] = args;
  const known = APPROVALS_ACTIONS.find((a) => a === action);
  if (known === undefined)
    throw configError(GatewayErrorCode.USAGE, `approvals takes one of ${APPROVALS_ACTIONS.join(', ')}`);
  if (known === 'list' ? id !== undefined || values.reason !== undefined : id === undefined || extra.length > 0)
    throw configError(
      GatewayErrorCode.USAGE,
      known === 'list' ? 'approvals list takes no id and no --reason' : `approvals ${known} takes one question id`,
    );
  if (known === 'deny' && (values.reason === undefined || values.reason.trim() === ''))
    throw configError(GatewayErrorCode.USAGE, 'approvals deny needs --reason: the caller reads it');
  return {
    kind: 'approvals',
    config: values.config ?? DEFAULT_CONFIG,
    action: known,
    json: values.json ?? false,
    ...(id === undefined ? {} : { id }),
    ...(values.reason === undefined ? {} : { reason: values.reason }),
    ...(values.url === undefined ? {} : { url: values.url }),
  };
}

const CREDENTIALS_ACTIONS: readonly CredentialsAction[] = ['list', 'revoke', 'rotate'];

function credentialsCommand(
  values: {
    config?: string;
    json?: boolean;
    url?: string;
    out?: string;
    upstream?: string;
    subject?: string;
    'log-format'?: string;
    'log-level'?: string;
  },
  args: readonly string[],
): Command {
  if (values.out !== undefined || values['log-format'] !== undefined || values['log-level'] !== undefined)
    throw configError(GatewayErrorCode.USAGE, 'credentials takes --config, --url, --upstream, --subject and --json');
  const [action, ...extra] = args;
  const known = CREDENTIALS_ACTIONS.find((a) => a === action);
  if (known === undefined || extra.length > 0)
    throw configError(GatewayErrorCode.USAGE, `credentials takes one of ${CREDENTIALS_ACTIONS.join(', ')}`);
  const { upstream, subject } = values;
  if (known === 'revoke' && upstream === undefined && subject === undefined)
    throw configError(GatewayErrorCode.USAGE, 'credentials revoke takes --upstream, --subject or both');
  if (known === 'rotate' && (upstream !== undefined || subject !== undefined))
    throw configError(
      GatewayErrorCode.USAGE,
      'credentials rotate reseals every grant: it takes no --upstream or --subject',
    );
  return {
    kind: 'credentials',
    config: values.config ?? DEFAULT_CONFIG,
    action: known,
    json: values.json ?? false,
    ...(upstream === undefined ? {} : { upstream }),
    ...(subject === undefined ? {} : { subject }),
    ...(values.url === undefined ? {} : { url: values.url }),
  };
}

const AUDIT_ACTIONS: readonly AuditAction[] = ['export', 'verify'];

function auditCommand(
  values: {
    config?: string;
    json?: boolean;
    url?: string;
    after?: string;
    out?: string;
    'log-format'?: string;
    'log-level'?: string;
  },
  args: readonly string[],
): Command {
  if (values.out !== undefined || values['log-format'] !== undefined || values['log-level'] !== undefined)
    throw configError(GatewayErrorCode.USAGE, 'audit takes --config, --url, --after and --json');
  const [action, ...extra] = args;
  const known = AUDIT_ACTIONS.find((a) => a === action);
  if (known === undefined || extra.length > 0)
    throw configError(GatewayErrorCode.USAGE, `audit takes one of ${AUDIT_ACTIONS.join(', ')}`);
  if (known === 'export' && values.json)
    throw configError(GatewayErrorCode.USAGE, 'audit export writes JSON Lines: drop --json');
  if (known === 'verify' && values.after !== undefined)
    throw configError(GatewayErrorCode.USAGE, 'audit verify checks the whole chain: drop --after');
  const after = values.after === undefined ? undefined : Number(values.after);
  if (after !== undefined && !(/^\d{1,15}$/.test(values.after ?? '') && Number.isSafeInteger(after)))
    throw configError(GatewayErrorCode.USAGE, '--after takes an entry number (a whole number >= 0)');
  return {
    kind: 'audit',
    config: values.config ?? DEFAULT_CONFIG,
    action: known,
    json: values.json ?? false,
    ...(after === undefined ? {} : { after }),
    ...(values.url === undefined ? {} : { url: values.url }),
  };
}
