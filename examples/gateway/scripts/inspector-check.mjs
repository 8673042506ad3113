// A scripted check with the official MCP Inspector CLI: start the demo gateway (sluice serve in front
// of server-everything), then list its resources and prompts and read one, as a user of the Inspector
// would. Exits non-zero when any step fails. Run from the repository root:
//   node examples/gateway/scripts/inspector-check.mjs
// The Inspector is fetched with npx at the pinned version; it is not a dependency of the repository.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function inspector(url, ...args) {
  return new Promise((resolve, reject) => {
    execFile(
      'npx',
      ['-y', INSPECTOR, '--cli', url, ...args],
      { cwd: tmpdir(), timeout: 120_000, maxBuffer: 10 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${args.join(' ')}: ${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

function check(condition, what) {
  if (!condition) throw new Error(`inspector check failed: ${what}`);
  process.stderr.write(`ok: ${what}\n`);
}

const port = await freePort();
const ledger = mkdtempSync(join(tmpdir(), 'sluice-inspector-'));
const gateway = spawn(
  process.execPath,
  [
    '--conditions=sluice:source',
    '--import',
    'tsx',
    'packages/gateway/src/cli.ts',
    'serve',
    '--config',
    'examples/gateway/sluice.config.json',
  ],
  {
    cwd: ROOT,
    env: { ...process.env, SLUICE_PORT: String(port), SLUICE_RISK_LEDGER: join(ledger, 'ledger.json') },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
try {
  await new Promise((resolve, reject) => {
    let seen = '';
    gateway.stderr.on('data', (chunk) => {
      seen += chunk.toString();
      if (seen.includes('"event":"gateway.ready"')) resolve();
    });
    gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code}):\n${seen}`)));
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  const { resources } = await inspector(url, '--method', 'resources/list');
  check(
    resources.some((r) => r.uri === 'demo://resource/static/document/architecture.md'),
    'resources/list shows the resources of server-everything',
  );
  const { prompts } = await inspector(url, '--method', 'prompts/list');
  check(
    prompts.some((p) => p.name === 'everything_args-prompt'),
    'prompts/list shows its prompts, namespaced',
  );
  const read = await inspector(url, '--method', 'resources/read', '--uri', 'demo://resource/dynamic/text/2');
  check(read.contents[0]?.text?.startsWith('Resource 2:'), 'resources/read reads one through its template');
} finally {
  gateway.kill('SIGKILL');
  rmSync(ledger, { recursive: true, force: true });
}
