// The first hour of an operator and of a plugin author, from packed tarballs in a fresh folder outside the
// workspace. Locally: `npm install` the gateway's tarballs, `npx sluice init`, build and `npm pack` the guide's
// complete plugin (examples/third-party-plugin's sources with the guide's package.json and tsconfig.json) and
// install that tarball beside the gateway, name it in the config, then `npx sluice check` and `npx sluice serve`:
// a client lists the tools with the API key, calls one, and the plugin has written its audit line.
// Globally: the README's `npm install -g @sluice/gateway` into a prefix of its own (npm takes the @sluice scope
// from a registry on loopback serving the same tarballs), that `sluice init`, the guide's `sluice create plugin`
// steps as written (npm install, npm test, npm pack, which builds first), the plugin installed beside the global
// gateway, and `sluice serve`: tools/list, a call, and a call the scaffolded plugin refuses; and the README's
// `npx @sluice/gateway --version`.
// Needs a build and the npm registry (for the third-party dependencies).
//   node scripts/first-hour.mjs [--keep]       (scripts/consumers.mjs runs it too, on its own tarballs)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
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

/**
 * Runs `sluice serve` (through `npx sluice`, or the `sluice` on `env.PATH`) until it logs gateway.ready;
 * resolves with what it logged and a way to stop it.
 */
function serve(app, env, sluice = ['npx', 'sluice']) {
  return new Promise((resolve, reject) => {
    // npx starts the gateway as its own child: in a process group of its own, both stop together (stop()).
    const child = spawn(sluice[0], [...sluice.slice(1), 'serve', '--log-format', 'json'], {
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
const [url, key, other] = process.argv.slice(2);
const client = new Client({ name: 'first-hour', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer ' + key } } }));
const { tools } = await client.listTools();
const answer = await client.callTool({ name: 'fx_echo', arguments: { text: 'first hour' } });
const second = other === undefined ? undefined : await client.callTool({ name: other, arguments: {} });
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), answer, second }));
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
  await globalFirstHour(tarballs, work, app);
  return 'ok';
}

const QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/** `run` without blocking this process, whose event loop answers for the scope registry meanwhile. */
function runAsync(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} failed (${code}):\n${out}\n${err}`));
    });
  });
}

/**
 * A registry on loopback serving the packed @sluice tarballs as if they were published: npm asks it for the
 * @sluice scope only (`@sluice:registry`), and the npm registry for everything else, so the documented
 * `npm install -g @sluice/gateway` and a scaffolded plugin's `npm install` run as they would for a user.
 */
async function scopeRegistry(tarballs) {
  const packages = new Map();
  for (const [name, file] of tarballs) {
    const data = readFileSync(file);
    const manifest = JSON.parse(run('tar', ['-xzOf', file, 'package/package.json']));
    const dist = {
      integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
      shasum: createHash('sha1').update(data).digest('hex'),
    };
    packages.set(name, { manifest, data, dist, file: basename(file) });
  }
  let url = '';
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://registry').pathname).slice(1);
    const tarball = [...packages.values()].find((entry) => path === `-/${entry.file}`);
    if (tarball !== undefined) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball.data);
      return;
    }
    const entry = packages.get(path);
    if (entry === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const { version } = entry.manifest;
    const release = { ...entry.manifest, dist: { ...entry.dist, tarball: `${url}/-/${entry.file}` } };
    const packument = { name: path, 'dist-tags': { latest: version }, versions: { [version]: release } };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}`;
  return { url, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** The lines of the first `sh` block after `sentence` in `file` (from the root), without comments. */
function documentedCommands(file, sentence) {
  const text = readFileSync(join(root, file), 'utf8');
  const at = text.indexOf(sentence);
  if (at < 0) throw new Error(`${file} no longer says "${sentence}"`);
  return /```sh\n([\s\S]*?)\n```/
    .exec(text.slice(at))[1]
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
}

/** The command `line` of the documented ones, or an error saying the docs no longer show it. */
function documented(commands, line, file) {
  if (!commands.includes(line)) throw new Error(`${file} no longer shows \`${line}\`: ${commands.join('; ')}`);
  return line.split(' ');
}

/**
 * The documented global install, from the same tarballs: `npm install -g @sluice/gateway` into a prefix of its
 * own (the machine's global tree is untouched), then that prefix's `sluice` on the PATH: `sluice init` in a
 * fresh folder, the plugin guide's `sluice create plugin` steps, the packed plugin installed beside the
 * global gateway, and `sluice serve` answering tools/list, a call, and a call the plugin refuses.
 */
export async function globalFirstHour(tarballs, work, clientDir) {
  const registry = await scopeRegistry(tarballs);
  try {
    const prefix = join(work, 'global');
    const env = {
      ...process.env,
      npm_config_prefix: prefix,
      'npm_config_@sluice:registry': registry.url,
      PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}`,
      SLUICE_API_KEY: KEY,
    };
    const readme = 'packages/gateway/README.md';
    const install = documentedCommands(readme, 'one npm package with a `sluice` command');
    const [npmCommand, ...installArgs] = documented(install, 'npm install -g @sluice/gateway', readme);
    await runAsync(npmCommand, [...installArgs, ...QUIET], { cwd: work, env });
    if (!existsSync(join(prefix, 'bin', 'sluice'))) throw new Error(`npm install -g put no sluice in ${prefix}/bin`);
    // `npx @sluice/gateway`, as the README shows it, with a cache and a prefix of its own (npx keeps what it
    // fetched in the cache, and must not find the global install); npm_config_yes is the answer to its prompt.
    const [npx, ...npxArgs] = documented(install, 'npx @sluice/gateway --version', readme);
    const fetched = await runAsync(npx, npxArgs, {
      cwd: work,
      env: {
        ...env,
        npm_config_cache: join(work, 'npx-cache'),
        npm_config_prefix: join(work, 'npx'),
        npm_config_yes: 'true',
      },
    });
    const version = /-(\d+\.\d+\.\d+[^/]*)\.tgz$/.exec(tarballs.get('@sluice/gateway'))?.[1];
    if (fetched.trim() !== version) throw new Error(`npx @sluice/gateway --version printed ${fetched}, not ${version}`);

    // The operator, in a fresh folder, with the global `sluice` on the PATH as the README says.
    const operator = join(work, 'operator');
    mkdirSync(operator);
    const start = documentedCommands(readme, 'Start from a config it writes for you');
    const sluice = (line) => {
      const [command, ...args] = documented(start, line, readme);
      return runAsync(command, args, { cwd: operator, env });
    };
    await sluice('sluice init');
    const config = JSON.parse(readFileSync(join(operator, 'sluice.config.json'), 'utf8'));

    // The plugin author: the guide's steps, as written.
    const author = join(work, 'author');
    mkdirSync(author);
    let cwd = author;
    const guide = 'docs/writing-a-plugin.md';
    const steps = documentedCommands(guide, "The gateway's CLI writes a plugin package");
    documented(steps, 'sluice create plugin @acme/sluice-guard', guide);
    for (const line of steps) {
      const [command, ...args] = line.split(' ');
      if (command === 'cd') cwd = join(cwd, ...args);
      else
        await runAsync(command, command === 'npm' && args[0] === 'install' ? [...args, ...QUIET] : args, { cwd, env });
    }
    const packed = readdirSync(cwd).find((file) => file.endsWith('.tgz'));
    if (packed === undefined) throw new Error(`npm pack left no tarball in ${cwd}`);
    // Beside the global gateway, as the gateway's README says for a global install.
    documented(
      documentedCommands(readme, 'The gateway and a plugin it loads by name'),
      'npm install -g ./acme-sluice-guard-0.1.0.tgz',
      readme,
    );
    await runAsync('npm', ['install', '-g', join(cwd, packed), ...QUIET], { cwd, env });

    config.listen.http.port = 0;
    config.upstreams = [
      {
        name: 'fx',
        namespace: 'fx',
        connection: { type: 'stdio', command: 'node', args: [join(clientDir, 'upstream.mjs')] },
      },
    ];
    config.plugins = {
      custom: [{ module: '@acme/sluice-guard', export: 'guardPlugin', options: { refuse: ['fx_held'] } }],
    };
    writeFileSync(join(operator, 'sluice.config.json'), JSON.stringify(config, null, 2));
    await sluice('sluice check');
    const served = await serve(operator, env, ['sluice']);
    try {
      if (!served.ready.plugins.includes('@acme/sluice-guard'))
        throw new Error(`the global gateway did not load the plugin: ${JSON.stringify(served.ready.plugins)}`);
      const answered = await runAsync(process.execPath, ['client.mjs', served.ready.url, KEY, 'fx_held'], {
        cwd: clientDir,
      });
      const { tools, answer, second } = JSON.parse(answered);
      if (!tools.includes('fx_echo')) throw new Error(`tools/list: ${tools.join(', ')}`);
      if (answer.content?.[0]?.text !== 'first hour') throw new Error(`fx_echo answered ${JSON.stringify(answer)}`);
      if (second._meta?.['dev.sluice/error']?.code !== 'GUARD_REFUSED')
        throw new Error(`the plugin did not refuse fx_held: ${JSON.stringify(second)}`);
    } finally {
      served.stop();
    }
  } finally {
    await registry.close();
  }
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
