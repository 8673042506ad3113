// The first hour of an operator and of a plugin author, from packed tarballs in a fresh folder outside the
// workspace: `npm install` the gateway's tarballs, `npx sluice init`, build and `npm pack` the guide's complete
// plugin (examples/third-party-plugin's sources with the guide's package.json and tsconfig.json) and install that
// tarball beside the gateway, name it in the config, then `npx sluice check` and `npx sluice serve`: a client
// lists the tools with the API key, calls one, and the plugin has written its audit line.
// Needs a build and the npm registry (for the gateway's third-party dependencies).
//   node scripts/first-hour.mjs [--keep]       (scripts/consumers.mjs runs it too, on its own tarballs)
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packAll, root, run } from './pack.mjs';

const KEY = 'first-hour-api-key-0123456789';

/** The first JSON block of the guide after `sentence`. */
function guideJson(sentence) {
  const guide = readFileSync(join(root, 'docs', 'writing-a-plugin.md'), 'utf8');
  const at = guide.indexOf(sentence);
  if (at < 0) throw new Error(`the guide no longer says "${sentence}"`);
  return JSON.parse(/```json\n([\s\S]*?)\n```/.exec(guide.slice(at))[1]);
}

/** Runs `sluice serve` until it logs gateway.ready; resolves with what it logged and a way to stop it. */
function serve(app, env) {
  return new Promise((resolve, reject) => {
    // npx starts the gateway as its own child: in a process group of its own, both stop together (stop()).
    const child = spawn('npx', ['sluice', 'serve', '--log-format', 'json'], {
      cwd: app,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    const stop = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    let log = '';
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`sluice serve was not ready within 60 s:\n${log}`));
    }, 60_000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const ready = log.split('\n').find((line) => line.includes('"event":"gateway.ready"'));
      if (ready === undefined) return;
      clearTimeout(timer);
      resolve({ stop, ready: JSON.parse(ready), log: () => log });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sluice serve exited (${code}):\n${log}`));
    });
  });
}

/** The client side, run inside the fresh folder so that it uses the SDK client the tarballs installed. */
const CLIENT = `import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
const [url, key] = process.argv.slice(2);
const client = new Client({ name: 'first-hour', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer ' + key } } }));
const { tools } = await client.listTools();
const answer = await client.callTool({ name: 'fx_echo', arguments: { text: 'first hour' } });
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), answer }));
await client.close();
`;

/** The journey, in `work`, from the tarballs of every package (a map from package name to path). */
export async function firstHour(tarballs, work) {
  const app = join(work, 'first-hour');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'first-hour', private: true, type: 'module' }));
  const npm = (args) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app });
  // Every @sluice tarball at once, so that npm takes the gateway's @sluice dependencies from them.
  npm(['install', ...[...tarballs.values()]]);

  // The operator: a starter config.
  run('npx', ['sluice', 'init'], { cwd: app });
  const config = JSON.parse(readFileSync(join(app, 'sluice.config.json'), 'utf8'));
  if (config.$schema !== './sluice.config.schema.json' || !existsSync(join(app, 'sluice.config.schema.json')))
    throw new Error('sluice init wrote no $schema beside the config');

  // The plugin author: the guide's complete plugin, built, packed and installed beside the gateway.
  const plugin = join(app, 'plugin');
  cpSync(join(root, 'examples', 'third-party-plugin', 'src'), join(plugin, 'src'), { recursive: true });
  const manifest = guideJson('for the package on npm');
  writeFileSync(join(plugin, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(plugin, 'tsconfig.json'), JSON.stringify(guideJson('and a `tsconfig.json` that emits')));
  // Its devDependencies as the guide lists them; @sluice/core is the tarball's, installed above.
  const devDependencies = Object.entries(manifest.devDependencies).filter(([name]) => name !== '@sluice/core');
  npm(['install', '--no-save', ...devDependencies.map(([name, range]) => `${name}@${range}`)]);
  run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', plugin]);
  const packed = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: plugin });
  rmSync(plugin, { recursive: true, force: true });
  npm(['install', join(work, packed.trim().split('\n').at(-1))]);

  // An upstream (the gateway tests' stdio fixture, on the SDK the tarballs installed) and the plugin in the config.
  cpSync(join(root, 'packages', 'gateway', 'test', 'fixtures', 'upstream.mjs'), join(app, 'upstream.mjs'));
  config.listen.http.port = 0;
  config.upstreams = [
    { name: 'fx', namespace: 'fx', connection: { type: 'stdio', command: 'node', args: ['upstream.mjs'] } },
  ];
  const audit = join(app, 'audit.jsonl');
  config.plugins = { custom: [{ module: manifest.name, export: 'auditTrail', options: { file: audit } }] };
  writeFileSync(join(app, 'sluice.config.json'), JSON.stringify(config, null, 2));

  const env = { ...process.env, SLUICE_API_KEY: KEY };
  const checked = run('npx', ['sluice', 'check', '--json'], { cwd: app, env });
  if (!checked.includes('fx_echo')) throw new Error(`sluice check does not list fx_echo:\n${checked}`);

  const served = await serve(app, env);
  try {
    if (!served.ready.plugins.includes('audit-trail'))
      throw new Error(`the gateway did not load the plugin: ${JSON.stringify(served.ready.plugins)}`);
    writeFileSync(join(app, 'client.mjs'), CLIENT);
    const { tools, answer } = JSON.parse(run(process.execPath, ['client.mjs', served.ready.url, KEY], { cwd: app }));
    if (!tools.includes('fx_echo')) throw new Error(`tools/list: ${tools.join(', ')}`);
    if (answer.content?.[0]?.text !== 'first hour') throw new Error(`fx_echo answered ${JSON.stringify(answer)}`);
    const lines = readFileSync(audit, 'utf8').trim().split('\n');
    if (!lines.some((line) => line.includes('fx_echo'))) throw new Error(`the audit file holds ${lines.join('\n')}`);
  } finally {
    served.stop();
  }
  return 'ok';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const work = mkdtempSync(join(tmpdir(), 'sluice-first-hour-'));
  try {
    process.stdout.write(`${await firstHour(packAll(join(work, 'tarballs')), work)} first hour from tarballs\n`);
  } finally {
    if (process.argv.includes('--keep')) process.stdout.write(`kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}
