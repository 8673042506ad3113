import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pluginSettings } from '../src/plugins.js';

export interface RunningGateway {
  /** The gateway's MCP endpoint. */
  readonly url: URL;
  /** Everything the gateway logged, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);
const CLI_SOURCE = join(dirname(require.resolve('@sluice/gateway/package.json')), 'src', 'cli.ts');
// By URL: the child runs in a temporary folder, from where a bare 'tsx' would not resolve.
const TSX = pathToFileURL(require.resolve('tsx')).href;
const READY_TIMEOUT_MS = 30_000;

/** The gateway config: one HTTP upstream, and every plugin at the conformance server's own settings. */
function configFor(upstream: URL): unknown {
  return {
    name: 'sluice-gateway-conformance',
    listen: { http: { port: 0 } },
    upstreams: [{ name: 'conformance', connection: { type: 'http', url: upstream.href } }],
    plugins: pluginSettings({ service: 'gateway' }),
    logLevel: 'info',
  };
}

/** Starts `sluice serve --config <file>` from its sources as a child process, fronting `upstream`. */
export async function startGateway(upstream: URL): Promise<RunningGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-gateway-conformance-'));
  const file = join(dir, 'sluice.config.json');
  await writeFile(file, JSON.stringify(configFor(upstream), null, 2));
  const child = spawn(
    process.execPath,
    ['--conditions=sluice:source', '--import', TSX, CLI_SOURCE, 'serve', '--config', file],
    {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not become ready:\n${log}`)), READY_TIMEOUT_MS);
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const ready = /"event":"gateway\.ready".*?"url":"([^"]+)"/.exec(log);
      if (ready) {
        clearTimeout(timer);
        resolve(new URL(ready[1]!));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited before it was ready:\n${log}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, log: () => log, stop };
}
