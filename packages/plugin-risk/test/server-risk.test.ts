import { describe, expect, it } from 'vitest';
import { ServerFloor, assessServer, bucket } from '@sluice/plugin-risk';
import { classifyHost } from '../src/scoring/host-class.js';
import { isPrivilegedScope } from '../src/scoring/server-risk.js';
import type { CatalogEntry, ServerConfig } from '@sluice/plugin-risk';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const documented = { url: 'https://docs.example.com/mcp' };
const catalog: CatalogEntry[] = [
  { id: 'acme', trust: 'vendor-official', hosts: ['mcp.acme.example', '*.acme.example'], docs: documented },
  {
    id: 'community-notes',
    trust: 'community-curated',
    hosts: ['notes.example.org'],
    commands: ['npx -y notes-mcp*'],
    docs: documented,
  },
  { id: 'odd', trust: 'unknown', hosts: ['odd.example.net'], docs: documented },
];
const assess = (config: ServerConfig) => assessServer(config, { catalog, now: NOW });

describe('host classification', () => {
  it.each([
    ['stdio', undefined, 'STDIO'],
    ['in-process', undefined, 'IN_PROCESS'],
    ['http', 'http://127.0.0.1:8080/mcp', 'LOOPBACK'],
    ['http', 'http://localhost/mcp', 'LOOPBACK'],
    ['http', 'http://[::1]:3000/mcp', 'LOOPBACK'],
    ['http', 'http://[::ffff:127.0.0.1]/mcp', 'LOOPBACK'],
    ['sse', 'http://10.1.2.3/sse', 'PRIVATE_LAN'],
    ['http', 'http://172.20.0.5/mcp', 'PRIVATE_LAN'],
    ['http', 'http://192.168.1.20/mcp', 'PRIVATE_LAN'],
    ['http', 'http://[fd12::1]/mcp', 'PRIVATE_LAN'],
    ['http', 'http://tools.internal/mcp', 'PRIVATE_LAN'],
    ['http', 'http://mcp-gateway:8080/mcp', 'PRIVATE_LAN'],
    ['http', 'https://mcp.example.com/mcp', 'PUBLIC'],
    ['http', 'https://8.8.8.8/mcp', 'PUBLIC'],
    ['http', 'https://172.32.0.1/mcp', 'PUBLIC'],
    ['http', 'not a url', 'PUBLIC'],
    ['http', undefined, 'PUBLIC'],
  ] as const)('classifies %s %s as %s', (transport, url, expected) => {
    expect(classifyHost(transport, url)).toBe(expected);
  });
});

describe('server risk axes', () => {
  it('scores transport 1 only for a private LAN host', () => {
    expect(assess({ transport: 'http', url: 'http://10.0.0.2/mcp', auth: { kind: 'oauth' } }).axes.transport).toBe(1);
    for (const config of [
      { transport: 'stdio' },
      { transport: 'http', url: 'http://127.0.0.1/mcp' },
      { transport: 'http', url: 'https://a.example.com' },
    ] as const) {
      expect(assess(config).axes.transport).toBe(0);
    }
  });

  it('scores auth 0 for stdio and loopback whatever the kind', () => {
    expect(assess({ transport: 'stdio', auth: { kind: 'oauth-custom' } }).axes.auth).toBe(0);
    expect(assess({ transport: 'http', url: 'http://localhost/mcp', auth: { kind: 'bearer' } }).axes.auth).toBe(0);
  });

  it.each([
    ['none', 0],
    ['oauth', 0],
    ['api-key', 1],
    ['bearer', 1],
    ['oauth-custom', 2],
  ] as const)('scores auth %s on a remote host as %i', (kind, score) => {
    expect(assess({ transport: 'http', url: 'https://mcp.acme.example/mcp', auth: { kind } }).axes.auth).toBe(score);
  });

  it.each([
    [{ catalog: 'acme' }, 0, 'catalog'],
    [{ catalog: 'community-notes' }, 1, 'catalog'],
    [{ catalog: 'odd' }, 2, 'catalog'],
    [{ trust: 'vendor-official' }, 0, 'operator'],
    [{ trust: 'community-curated' }, 1, 'operator'],
    [{ trust: 'unknown' }, 2, 'operator'],
    [{ url: 'https://eu.acme.example/mcp' }, 1, 'host-match'],
    [{ url: 'https://elsewhere.example/mcp' }, 2, 'none'],
  ] as const)('scores trust of %o as %i (%s)', (config, score, origin) => {
    const result = assess({
      transport: 'http',
      url: 'https://elsewhere.example/mcp',
      auth: { kind: 'oauth' },
      ...config,
    });
    expect(result.axes.trust).toBe(score);
    expect(result.trust.origin).toBe(origin);
  });

  it('matches a stdio command against catalog command patterns', () => {
    const result = assess({ transport: 'stdio', command: 'npx -y notes-mcp@2' });
    expect(result.trust).toMatchObject({ origin: 'host-match', catalogId: 'community-notes' });
    expect(result.axes.trust).toBe(1);
  });

  it('gives one doc point each for no docs URL, inadequate docs and no use within 90 days, capped at 2', () => {
    const base = { transport: 'stdio', trust: 'vendor-official' } as const;
    expect(assess({ ...base, docs: documented }).axes.doc).toBe(0);
    expect(assess(base).axes.doc).toBe(1);
    expect(assess({ ...base, docs: { ...documented, adequate: false } }).axes.doc).toBe(1);
    expect(assess({ ...base, docs: { ...documented, lastUsedAt: '2026-01-01' } }).axes.doc).toBe(1);
    expect(assess({ ...base, docs: { ...documented, lastUsedAt: '2026-05-01' } }).axes.doc).toBe(0);
    expect(assess({ ...base, docs: { adequate: false, lastUsedAt: '2025-01-01' } }).axes.doc).toBe(2);
  });

  it('takes documentation from the catalog entry unless the operator says otherwise', () => {
    expect(assess({ transport: 'stdio', catalog: 'acme' }).axes.doc).toBe(0);
    expect(assess({ transport: 'stdio', catalog: 'acme', docs: { adequate: false } }).axes.doc).toBe(1);
  });
});

describe('server risk buckets', () => {
  it.each([
    [-1, 'L1'],
    [0, 'L1'],
    [1, 'L2'],
    [2, 'L3'],
    [3, 'L4'],
    [4, 'L5'],
    [7, 'L5'],
  ] as const)('buckets a total of %i as %s', (total, level) => {
    expect(bucket(total)).toBe(level);
  });

  it.each([
    [{ transport: 'http', url: 'https://mcp.acme.example/mcp', catalog: 'acme', auth: { kind: 'oauth' } }, 0, 'L1'],
    [{ transport: 'http', url: 'https://mcp.acme.example/mcp', catalog: 'acme', auth: { kind: 'bearer' } }, 1, 'L2'],
    [
      { transport: 'http', url: 'https://mcp.acme.example/mcp', catalog: 'community-notes', auth: { kind: 'bearer' } },
      2,
      'L3',
    ],
    [{ transport: 'http', url: 'http://10.0.0.9/mcp', catalog: 'community-notes', auth: { kind: 'bearer' } }, 3, 'L4'],
    [{ transport: 'http', url: 'http://10.0.0.9/mcp', auth: { kind: 'oauth-custom' }, docs: documented }, 5, 'L5'],
  ] as const)('sums %o to %i: %s', (config, total, level) => {
    const result = assess(config);
    expect(result.total).toBe(total);
    expect(result.level).toBe(level);
    expect(result.floors).toEqual([]);
  });
});

describe('server floor overrides', () => {
  it('sends a remote server without auth that can write to L5 (no-auth-write)', () => {
    const result = assess({ transport: 'http', url: 'https://mcp.acme.example/mcp', catalog: 'acme', writes: true });
    expect(result.total).toBe(0);
    expect(result.floors).toEqual([ServerFloor.NO_AUTH_WRITE]);
    expect(result.level).toBe('L5');
  });

  it('leaves a read-only remote server without auth of known trust to its sum', () => {
    const result = assess({ transport: 'http', url: 'https://mcp.acme.example/mcp', catalog: 'acme', writes: false });
    expect(result.floors).toEqual([]);
    expect(result.level).toBe('L1');
  });

  it('sends an unknown public URL without auth to L5 (no-auth-unknown), as soon as it is typed', () => {
    const result = assess({ transport: 'http', url: 'https://random.example.net/mcp', writes: false });
    expect(result.floors).toEqual([ServerFloor.NO_AUTH_UNKNOWN]);
    expect(result.level).toBe('L5');
  });

  it('does not apply the no-auth floors to loopback or stdio servers', () => {
    expect(assess({ transport: 'http', url: 'http://127.0.0.1:9000/mcp', writes: true }).floors).toEqual([]);
    expect(assess({ transport: 'stdio', writes: true }).floors).toEqual([]);
  });

  it('counts a server whose write capability is unknown as writing', () => {
    expect(assess({ transport: 'http', url: 'https://mcp.acme.example/mcp', catalog: 'acme' }).floors).toContain(
      ServerFloor.NO_AUTH_WRITE,
    );
  });

  it.each(['admin:org', 'repo.admin', 'write_all', 'delete_repo', 'Files.ReadWrite.All', 'Directory.Read.all'])(
    'treats the OAuth scope %s as privileged',
    (scope) => {
      expect(isPrivilegedScope(scope)).toBe(true);
      const result = assess({
        transport: 'http',
        url: 'https://mcp.acme.example/mcp',
        catalog: 'acme',
        auth: { kind: 'oauth', scopes: ['read', scope] },
      });
      expect(result.floors).toEqual([ServerFloor.PRIVILEGED_SCOPE]);
      expect(result.level).toBe('L5');
    },
  );

  it.each(['read:user', 'repo', 'calendar.allowlist', 'files.read'])(
    'does not treat the OAuth scope %s as privileged',
    (scope) => {
      expect(isPrivilegedScope(scope)).toBe(false);
    },
  );
});
