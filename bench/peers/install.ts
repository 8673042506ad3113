// The peer proxies at pinned versions, installed from the npm registry into a folder under the system's
// temporary directory (reused while the pins are the same): nothing of theirs enters the workspace.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The peers measured, pinned. Changing a pin installs afresh into another folder. */
export const PEERS = {
  'mcp-proxy': '6.7.9',
  supergateway: '4.0.0',
  '@civic/passthrough-mcp-server': '0.12.1',
  'mcp-hub': '4.2.1',
} as const;

export type Peer = keyof typeof PEERS;

/** The folder holding node_modules/ with every peer at its pin; installs them when missing. */
export function installPeers(): string {
  const pins = Object.entries(PEERS).map(([name, version]) => `${name}@${version}`);
  const key = createHash('sha256').update(pins.join('\n')).digest('hex').slice(0, 12);
  const folder = join(process.env.SLUICE_PEERS_DIR ?? tmpdir(), `sluice-bench-peers-${key}`);
  const stamp = join(folder, 'installed.json');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === JSON.stringify(pins)) return folder;
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  process.stderr.write(`peers: installing ${pins.join(' ')} into ${folder}\n`);
  // No install scripts: a peer runs only when the benchmark starts it.
  const npm = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', '--loglevel=error', ...pins],
    { cwd: folder, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (npm.status !== 0) throw new Error(`npm install of the peers failed (exit ${npm.status ?? npm.signal})`);
  writeFileSync(stamp, JSON.stringify(pins));
  return folder;
}

/** The version of a peer actually installed in the folder (its package.json), for the report. */
export function installedVersion(folder: string, peer: Peer): string {
  const manifest = JSON.parse(readFileSync(join(folder, 'node_modules', peer, 'package.json'), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : '?';
}
