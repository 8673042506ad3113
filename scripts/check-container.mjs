#!/usr/bin/env node
// Runs the image's runtime stage as a container would, where neither Docker nor a base image can be had:
// deploy/Dockerfile's /app (the stage's `pnpm deploy --prod` output and healthcheck.mjs), its ENV, its USER
// (uid 1000, unprivileged, in a user namespace of its own), a read-only root with only the compose file's
// writable mounts (tmpfs /tmp, the npm-cache volume, the state VOLUME), through bubblewrap. Then:
//   1. a config that binds 127.0.0.1: /healthz answers on loopback, the image's HEALTHCHECK fails;
//   2. without the npm-cache volume, an `npx -y` upstream cannot start (read-only root);
//   3. as compose runs it (the shipped deploy/sluice.config.json, SLUICE_HOST from the image, the volume): the
//      HEALTHCHECK passes, a client at the machine's non-loopback address lists the npx upstream's tools and
//      calls one, and SIGTERM drains and exits 0.
// Not run: `docker build` itself, the base image, Docker's networking (-p), HEALTHCHECK timing, cap_drop and
// no-new-privileges as Docker applies them (bubblewrap drops every capability and sets no_new_privs).
//
//   node scripts/check-container.mjs [--app <dir>] [--keep]     (as root; needs bwrap, redis-server, the registry)
// --app reuses a /app made before (check-image.mjs --keep leaves one in out/); without it the stage's
// `pnpm --filter @sluice/gateway deploy --legacy --prod` runs from this (built) tree.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, parseDockerfile, progress, runtimeOf } from './image-tools.mjs';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const NODE_UID = 1000;
/** An upstream as most MCP configs launch one: fetched by npx into npm's cache on first start. */
const NPX_UPSTREAM = ['-y', '@modelcontextprotocol/server-memory@2026.8.31'];
const keep = process.argv.includes('--keep');
const appArg = process.argv.indexOf('--app');

const { fail, step } = progress('check-container');

if (process.getuid?.() !== 0) fail('run as root: the sandbox runs as uid 1000 through setpriv');
const BWRAP = ['/usr/bin/bwrap', '/bin/bwrap'].find((path) => existsSync(path));
if (BWRAP === undefined) fail('bubblewrap is not installed (apt-get install -y bubblewrap)');
const OUTSIDE = Object.values(networkInterfaces())
  .flat()
  .find((address) => address !== undefined && !address.internal && address.family === 'IPv4')?.address;
if (OUTSIDE === undefined) fail('this machine has no non-loopback IPv4 address to reach the gateway at');

const [, runtime] = parseDockerfile(readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8'));
const image = runtimeOf(runtime);
if (image.user !== 'node') fail(`the runtime stage runs as "${image.user}", not node`);

// The compose replicas' writable places: read_only: true, tmpfs, and the named volumes' targets.
const compose = readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8');
const gatewayBlock = compose.slice(compose.indexOf('x-gateway:'), compose.indexOf('\nservices:'));
if (!/^ {2}read_only: true$/m.test(gatewayBlock)) fail('the compose replicas no longer have a read-only root');
const tmpfs =
  /^ {2}tmpfs: \[(.*)\]$/m
    .exec(gatewayBlock)?.[1]
    .split(',')
    .map((path) => path.trim()) ?? [];
const volumes = [...gatewayBlock.matchAll(/^ {4}- ([\w.-]+):(\/\S+?)(:ro)?$/gm)]
  .filter(([, source]) => !source.startsWith('.'))
  .map(([, , target]) => target);
const stateVolumes = runtime.steps.filter((s) => s.op === 'VOLUME').flatMap((s) => JSON.parse(s.args));
const cacheDir = image.env.npm_config_cache;
if (!volumes.includes(cacheDir)) fail(`compose mounts no volume on npm's cache ${cacheDir}`);

const scratch = mkdtempSync(join(tmpdir(), 'sluice-container-'));
chmodSync(scratch, 0o755);
const children = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (!keep) rmSync(scratch, { recursive: true, force: true });
});

// /app, as the build stage leaves it.
let app;
if (appArg > 0) {
  app = resolve(process.argv[appArg + 1] ?? fail('--app takes a folder'));
} else {
  app = join(scratch, 'app');
  step('pnpm --filter @sluice/gateway deploy --legacy --prod (the build stage, on this built tree)');
  execFileSync('npx', ['-y', 'pnpm@10', '--filter', '@sluice/gateway', 'deploy', '--legacy', '--prod', app], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  rmSync(join(app, 'src'), { recursive: true, force: true });
  rmSync(join(app, 'test'), { recursive: true, force: true });
  copyFileSync(join(ROOT, 'deploy/healthcheck.mjs'), join(app, 'healthcheck.mjs'));
}
if (!existsSync(join(app, 'healthcheck.mjs'))) fail(`${app} is not the image's /app: no healthcheck.mjs`);

/** A folder owned by the image's user, standing for a volume. */
function volume(name) {
  const dir = join(scratch, name);
  mkdirSync(dir);
  chownSync(dir, NODE_UID, NODE_UID);
  return dir;
}
const passwd = join(scratch, 'passwd');
writeFileSync(passwd, `root:x:0:0:root:/root:/bin/sh\nnode:x:${NODE_UID}:${NODE_UID}::/home/node:/bin/sh\n`);
const group = join(scratch, 'group');
writeFileSync(group, `root:x:0:\nnode:x:${NODE_UID}:\n`);

/**
 * The bubblewrap arguments of one container: a root of its own (from the machine's /usr, as a slim image's),
 * read-only once mounted, with the image's /app and the config read-only, and only `writable` writable.
 */
function container(config, writable) {
  const args = ['--unshare-user', '--uid', String(NODE_UID), '--gid', String(NODE_UID)];
  args.push('--unshare-ipc', '--unshare-uts', '--die-with-parent');
  args.push('--ro-bind', '/usr', '/usr');
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) args.push('--symlink', `usr/${link}`, `/${link}`);
  for (const file of ['/etc/ssl', '/etc/ca-certificates', '/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf'])
    if (existsSync(file)) args.push('--ro-bind', file, file);
  args.push('--ro-bind', passwd, '/etc/passwd', '--ro-bind', group, '/etc/group');
  args.push('--proc', '/proc', '--dev', '/dev', '--dir', '/home/node');
  // The folders the stage's RUN makes; read-only with the root unless a volume is mounted there.
  for (const dir of ['/var/lib/sluice', '/etc/sluice', cacheDir]) args.push('--dir', dir);
  args.push('--ro-bind', app, '/app', '--ro-bind', config, '/etc/sluice/sluice.config.json');
  for (const path of tmpfs) args.push('--tmpfs', path);
  for (const [dir, target] of writable) args.push('--bind', dir, target);
  args.push('--remount-ro', '/', '--chdir', image.workdir ?? '/app', '--clearenv');
  return args;
}

/** Runs `command` in the container, as uid 1000 from outside too (setpriv, then an unprivileged bwrap). */
function inContainer(config, writable, env, command, stdio) {
  const setenv = Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]);
  const argv = ['--reuid', String(NODE_UID), '--regid', String(NODE_UID), '--clear-groups'];
  return spawn('setpriv', [...argv, BWRAP, ...container(config, writable), ...setenv, ...command], { stdio });
}

/** Starts the image's ENTRYPOINT + CMD in a container; resolves once it logs gateway.ready. */
function startGateway(label, config, writable, env) {
  const child = inContainer(config, writable, env, image.command, ['ignore', 'ignore', 'pipe']);
  children.push(child);
  let log = '';
  child.stderr.on('data', (chunk) => (log = (log + chunk).slice(-50_000)));
  const exited = new Promise((ok) => child.once('exit', (code) => ok(code)));
  const ready = new Promise((ok, ko) => {
    const timer = setTimeout(() => ko(new Error(`${label}: not ready within 180 s:\n${log}`)), 180_000);
    child.stderr.on('data', () => {
      if (!log.includes('"event":"gateway.ready"')) return;
      clearTimeout(timer);
      ok();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      ko(new Error(`${label}: the gateway exited (${code}) before it was ready:\n${log}`));
    });
  });
  return { child, ready, exited, log: () => log };
}

/** The pids under `pid`, children first. */
function descendants(pid) {
  const found = [];
  for (const queue = [pid]; queue.length > 0;) {
    const parent = queue.shift();
    let children;
    try {
      children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(' ').filter(Boolean).map(Number)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The container's main process (the ENTRYPOINT's node), which Docker's stop signals, as bwrap forwards none. */
function entrypointPid(gateway) {
  const pid = descendants(gateway.child.pid).find((candidate) => {
    try {
      return readFileSync(`/proc/${candidate}/cmdline`, 'utf8').split('\0').includes(image.command[1]);
    } catch {
      return false;
    }
  });
  if (pid === undefined) fail('cannot find the gateway process inside the container');
  return pid;
}

/** `docker stop`: SIGTERM to the main process; resolves with the container's exit code. */
function stop(gateway) {
  process.kill(entrypointPid(gateway), 'SIGTERM');
  return gateway.exited;
}

/** The image's HEALTHCHECK command, in the same container (as `docker exec` runs it): its exit code. */
function healthcheck(config, writable, env) {
  return new Promise((ok) => {
    const probe = inContainer(config, writable, env, image.healthcheck, ['ignore', 'ignore', 'ignore']);
    probe.once('exit', (code) => ok(code));
  });
}

const shipped = JSON.parse(readFileSync(join(ROOT, 'deploy/sluice.config.json'), 'utf8'));
const configFile = (name, mutate) => {
  const config = structuredClone(shipped);
  mutate(config);
  const file = join(scratch, name);
  writeFileSync(file, JSON.stringify(config, null, 2));
  chmodSync(file, 0o644);
  return file;
};
const npxUpstream = {
  name: 'memory',
  namespace: 'memory',
  connection: { type: 'stdio', command: 'npx', args: NPX_UPSTREAM },
};
const redisPort = await freePort();
const redis = spawn(
  'redis-server',
  ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  {
    stdio: 'ignore',
  },
);
children.push(redis);
const agentKey = 'check-container-agent-key-0123456789';
const env = {
  ...Object.fromEntries(Object.entries(image.env).map(([name, value]) => [name, value])),
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/home/node',
  SLUICE_AGENT_KEY: agentKey,
  SLUICE_ADMIN_KEY: 'check-container-admin-key-0123456789',
  SLUICE_APPROVAL_KEY: 'check-container-approval-key-0123456789abcdef',
  UPSTREAM_URL: 'http://127.0.0.1:9/mcp',
  REDIS_URL: `redis://127.0.0.1:${redisPort}`,
  // Port 3000 may be taken on a shared machine; the HEALTHCHECK reads the same variable.
  SLUICE_PORT: String(await freePort()),
};
const writableOf = (withCache) => [
  ...stateVolumes.map((target) => [volume(`state-${Math.random().toString(36).slice(2)}`), target]),
  ...(withCache ? [[volume(`npm-cache-${Math.random().toString(36).slice(2)}`), cacheDir]] : []),
];
step(
  `image ENV: ${Object.entries(image.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`,
);
step(`compose: read-only root, tmpfs ${tmpfs.join(', ')}, volumes on ${[...volumes, ...stateVolumes].join(', ')}`);

// 1. A config that names 127.0.0.1 itself: healthy on loopback, unhealthy to the image's HEALTHCHECK.
{
  const config = configFile('loopback.json', (c) => {
    c.listen.http.host = '127.0.0.1';
    c.upstreams = [];
  });
  const writable = writableOf(true);
  const gateway = startGateway('loopback bind', config, writable, env);
  await gateway.ready;
  const loopback = await fetch(`http://127.0.0.1:${env.SLUICE_PORT}/healthz`);
  if (loopback.status !== 200) fail(`/healthz on loopback answered ${loopback.status}`);
  const code = await healthcheck(config, writable, env);
  if (code !== 1) fail(`the HEALTHCHECK exited ${code} for a gateway bound to 127.0.0.1 (want 1: unreachable)`);
  await stop(gateway);
  step('a config bound to 127.0.0.1: /healthz answers on loopback, the HEALTHCHECK fails (exit 1)');
}

// 2. The read-only root without the npm-cache volume: the npx upstream cannot be fetched.
{
  const config = configFile('no-cache.json', (c) => {
    c.upstreams = [npxUpstream];
  });
  const gateway = startGateway('no npm-cache volume', config, writableOf(false), env);
  await gateway.ready;
  const ready = await fetch(`http://${OUTSIDE}:${env.SLUICE_PORT}/readyz`);
  if (ready.status !== 503) fail(`/readyz answered ${ready.status} with the npx upstream unable to start`);
  // npm reports the read-only folder as EROFS, or as ENOENT from its recursive mkdir.
  if (!/EROFS|read-only file system/i.test(gateway.log()) && !gateway.log().includes(`mkdir '${cacheDir}`))
    fail(`the npx upstream failed, but not on its cache under the read-only root:\n${gateway.log()}`);
  await stop(gateway);
  step(`without the npm-cache volume the npx upstream cannot write ${cacheDir} (read-only root), /readyz 503`);
}

// 3. As compose runs it.
{
  const config = configFile('compose.json', (c) => {
    c.upstreams = [npxUpstream];
    // The shipped risk policy (maxRisk L4) rates every tool of this server L5 and exposes none; it is not what
    // is checked here, so it goes, and the rest of the shipped config stays.
    delete c.plugins.risk;
  });
  if (shipped.listen.http.host !== '0.0.0.0' && !String(shipped.listen.http.host).includes('SLUICE_HOST'))
    fail(`deploy/sluice.config.json binds ${shipped.listen.http.host}`);
  const writable = writableOf(true);
  const gateway = startGateway('as compose runs it', config, writable, env);
  await gateway.ready;
  const uids = /^Uid:\s+(.*)$/m
    .exec(readFileSync(`/proc/${entrypointPid(gateway)}/status`, 'utf8'))?.[1]
    .trim()
    .split(/\s+/);
  if (!uids || uids.some((id) => id !== String(NODE_UID))) fail(`the gateway runs as uids ${uids?.join(' ')}`);
  const ready = await fetch(`http://${OUTSIDE}:${env.SLUICE_PORT}/readyz`);
  if (ready.status !== 200) fail(`/readyz at ${OUTSIDE} answered ${ready.status}:\n${gateway.log()}`);
  const code = await healthcheck(config, writable, env);
  if (code !== 0) fail(`the HEALTHCHECK exited ${code} for a gateway bound to 0.0.0.0`);
  const fromGateway = createRequire(join(ROOT, 'packages/gateway/package.json'));
  const { Client, StreamableHTTPClientTransport } = fromGateway('@modelcontextprotocol/client');
  const client = new Client({ name: 'check-container', version: '1.0.0' });
  const url = new URL(`http://${OUTSIDE}:${env.SLUICE_PORT}/mcp`);
  const headers = { Authorization: `Bearer ${agentKey}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  const { tools } = await client.listTools();
  if (!tools.some((tool) => tool.name === 'memory_read_graph'))
    fail(`tools/list at ${OUTSIDE} lacks memory_read_graph: ${tools.map((t) => t.name).join(', ')}\n${gateway.log()}`);
  const answer = await client.callTool({ name: 'memory_read_graph', arguments: {} });
  if (answer.isError) fail(`memory_read_graph answered an error: ${JSON.stringify(answer)}`);
  await client.close();
  const exit = await stop(gateway);
  if (exit !== 0) fail(`SIGTERM: the gateway exited ${exit}`);
  step(
    `as compose runs it: HEALTHCHECK passes, a client at ${OUTSIDE} lists ${tools.length} tools of the npx upstream and calls one, SIGTERM exits 0`,
  );
}
redis.kill('SIGTERM');
step(`passed${keep ? `; kept ${scratch}` : ''}`);
