// The root README's security table against the code: every share of the HTTP listener and of code mode has a
// row, each row's default is the one the code applies, and every setting a row names exists in the gateway's
// config. A default changed in the code without the table (or the other way round) fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HttpListenConfig } from '../packages/gateway/src/config-schema.js';
import { DEFAULT_GUESS_LIMITS } from '../packages/http/src/auth/guess-throttle.js';
import { HttpLimits } from '../packages/http/src/http-limits.js';
import { sessionLimits } from '../packages/http/src/http-sessions.js';
import { shareLimits } from '../packages/http/src/http-shares.js';
import { CPU_BANK_MS } from '../packages/plugin-code-mode/src/cpu-shares.js';
import { SandboxLimits } from '../packages/plugin-code-mode/src/options.js';

const readme = readFileSync(join(fileURLToPath(new URL('..', import.meta.url)), 'README.md'), 'utf8');

interface Row {
  readonly what: string;
  readonly limit: string;
  readonly configuredBy: string;
}

/** The rows of the table under `## Security limits`. */
function securityRows(): Row[] {
  const section = readme.slice(readme.indexOf('## Security limits'));
  const body = section.slice(0, section.indexOf('\n## ', 1));
  return body
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| what |'))
    .map((line) => {
      const cells = line.slice(2, -2).split(' | ');
      return { what: cells[0] ?? '', limit: cells[1] ?? '', configuredBy: cells.at(-1) ?? '' };
    });
}

const count = (n: number) => n.toLocaleString('en-US');
const duration = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1_000} s`);
const bytes = (n: number) => (n % 2 ** 20 === 0 ? `${n / 2 ** 20} MiB` : `${n / 2 ** 10} KiB`);
/** Whether `text` shows `value` as a whole figure (not as part of a longer number). */
const shows = (text: string, value: string) =>
  new RegExp(`(^|[^\\d,.])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\d,]|$)`).test(text);

/** The row whose last cell names `setting` in backticks. */
function rowFor(rows: readonly Row[], setting: string): Row | undefined {
  return rows.find((row) => row.configuredBy.includes(`\`${setting}\``));
}

describe("the README's security table", () => {
  const rows = securityRows();
  const shares = shareLimits({ maxConnections: HttpLimits.MAX_CONNECTIONS });
  const sandbox = SandboxLimits.parse({});

  it('has a row for every share of the listener, showing its default', () => {
    const expected: Record<keyof typeof shares, string> = {
      maxConnections: count(shares.maxConnections),
      maxUnauthenticatedConnections: count(shares.maxUnauthenticatedConnections),
      maxConnectionsPerCaller: count(shares.maxConnectionsPerCaller),
      maxHeldStreams: count(shares.maxHeldStreams),
      maxHeldStreamsPerCaller: count(shares.maxHeldStreamsPerCaller),
      heldStreamIdleMs: duration(shares.heldStreamIdleMs),
    };
    for (const [key, value] of Object.entries(expected)) {
      const row = rowFor(rows, `listen.http.${key}`);
      expect(row, `a row configured by listen.http.${key}`).toBeDefined();
      expect(shows(row!.limit, value), `${key}: "${row!.limit}" shows ${value}`).toBe(true);
    }
  });

  it("shows the listener's other bounds with the defaults the code applies", () => {
    const expected: Record<string, string> = {
      maxSessions: count(HttpLimits.MAX_SESSIONS),
      maxSessionMemoryBytes: bytes(HttpLimits.MAX_SESSION_MEMORY_BYTES),
      maxSessionsPerCaller: count(sessionLimits({}).maxSessionsPerCaller),
      maxInitializeBytes: bytes(HttpLimits.MAX_INITIALIZE_BYTES),
      sessionHandshakeMs: duration(HttpLimits.SESSION_HANDSHAKE_MS),
      sessionIdleMs: duration(HttpLimits.SESSION_IDLE_MS),
      headersTimeoutMs: duration(HttpLimits.HEADERS_TIMEOUT_MS),
      requestTimeoutMs: duration(HttpLimits.REQUEST_TIMEOUT_MS),
      keepAliveTimeoutMs: duration(HttpLimits.KEEP_ALIVE_TIMEOUT_MS),
    };
    for (const [key, value] of Object.entries(expected)) {
      const row = rowFor(rows, `listen.http.${key}`);
      expect(row, `a row configured by listen.http.${key}`).toBeDefined();
      expect(shows(row!.limit, value), `${key}: "${row!.limit}" shows ${value}`).toBe(true);
    }
    const listen = rows.find((row) => row.configuredBy.includes('HttpLimits.MAX_LISTEN_RESOURCES'));
    expect(listen?.limit).toBe(
      `${count(HttpLimits.MAX_LISTEN_RESOURCES)} URIs of ${count(HttpLimits.MAX_LISTEN_URI_CHARS)} characters`,
    );
    const guesses = rows.find((row) => row.configuredBy.includes('guessLimits'));
    expect(DEFAULT_GUESS_LIMITS.windowMs).toBe(60_000);
    expect(guesses?.limit).toContain(`${DEFAULT_GUESS_LIMITS.maxFailures} per minute per source`);
  });

  it("has a row for code mode's script shares and bounds, showing their defaults", () => {
    const expected: Record<string, string> = {
      maxConcurrentScripts: count(sandbox.maxConcurrentScripts),
      maxScriptsPerCaller: count(sandbox.maxScriptsPerCaller),
      memoryBytes: bytes(sandbox.memoryBytes),
      timeoutMs: duration(sandbox.timeoutMs),
    };
    for (const [key, value] of Object.entries(expected)) {
      const row = rowFor(rows, `plugins.codeMode.limits.${key}`);
      expect(row, `a row configured by plugins.codeMode.limits.${key}`).toBeDefined();
      expect(shows(row!.limit, value), `${key}: "${row!.limit}" shows ${value}`).toBe(true);
    }
    expect(shows(rowFor(rows, 'plugins.codeMode.limits.timeoutMs')!.limit, duration(sandbox.cpuMs))).toBe(true);
    const cpu = rowFor(rows, 'plugins.codeMode.limits.cpuSharePerCaller');
    expect(cpu, 'a row configured by plugins.codeMode.limits.cpuSharePerCaller').toBeDefined();
    expect(shows(cpu!.limit, String(sandbox.cpuSharePerCaller)), cpu!.limit).toBe(true);
    expect(shows(cpu!.limit, duration(CPU_BANK_MS)), cpu!.limit).toBe(true);
  });

  it('names only listener settings the gateway config has', () => {
    const named = rows.flatMap((row) => [...row.configuredBy.matchAll(/`listen\.http\.(\w+)`/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(10);
    const known = new Set(Object.keys(HttpListenConfig.shape));
    expect(named.filter((key) => !known.has(key))).toEqual([]);
  });
});
