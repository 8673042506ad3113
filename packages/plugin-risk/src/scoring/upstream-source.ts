import type { ImportSource } from '@sluice/core';
import { isPlainObject } from '../definition.js';
import type { AuthKind, ServerConfig } from './server-risk.js';

const TRANSPORTS = new Set(['stdio', 'http', 'sse', 'in-process']);
const API_KEY_HEADERS = new Set(['x-api-key', 'api-key', 'apikey', 'x-auth-token']);

/**
 * What an upstream's own source says about it, for fields the operator did
 * not configure: its transport and URL or command, and its auth from the
 * request header names. Reads the core's `source.connection` summary
 * (`{ type, url?, command?, args?, headerNames? }`); without one (an
 * adopted or hand-built source) this gives nothing.
 */
export function deriveServerConfig(source: ImportSource): ServerConfig {
  const connection = (source as { readonly connection?: unknown }).connection;
  if (!isPlainObject(connection)) return {};
  const config: ServerConfig = {};
  if (typeof connection.type === 'string' && TRANSPORTS.has(connection.type))
    config.transport = connection.type as ServerConfig['transport'];
  const url = connection.url instanceof URL ? connection.url.href : connection.url;
  if (typeof url === 'string') config.url = url;
  const command = commandLine(connection.command, connection.args);
  if (command !== undefined) config.command = command;
  const auth = authFromHeaders(connection.headers) ?? authFromHeaderNames(connection.headerNames);
  if (auth !== undefined) config.auth = { kind: auth };
  return config;
}

function commandLine(command: unknown, args: unknown): string | undefined {
  const parts = Array.isArray(command) ? command : [command, ...(Array.isArray(args) ? (args as unknown[]) : [])];
  const words = parts.filter((part): part is string => typeof part === 'string');
  return words.length > 0 ? words.join(' ') : undefined;
}

/** Header names only (values are secrets): an Authorization header counts as a bearer token. */
function authFromHeaderNames(names: unknown): AuthKind | undefined {
  if (!Array.isArray(names)) return undefined;
  const lower = names.filter((n): n is string => typeof n === 'string').map((n) => n.toLowerCase());
  if (lower.includes('authorization')) return 'bearer';
  return lower.some((n) => API_KEY_HEADERS.has(n)) ? 'api-key' : undefined;
}

function authFromHeaders(headers: unknown): AuthKind | undefined {
  if (!isPlainObject(headers)) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (key === 'authorization' && typeof value === 'string') return /^bearer\s/i.test(value) ? 'bearer' : 'api-key';
    if (API_KEY_HEADERS.has(key)) return 'api-key';
  }
  return undefined;
}
