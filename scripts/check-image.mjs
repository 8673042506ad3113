#!/usr/bin/env node
// Checks deploy/Dockerfile where no Docker daemon runs: every COPY source exists and is not ignored;
// the build stage's RUN commands, replayed in a fresh clone of the committed tree, produce the image's
// /app; and the runtime stage's ENTRYPOINT + CMD, run from that output as the image's unprivileged user
// (uid 1000, through setpriv) against the shipped deploy/sluice.config.json with a local redis-server,
// passes the image's HEALTHCHECK, serves the console login, and drains on SIGTERM.
//
//   node scripts/check-image.mjs [--keep]        (as root: setpriv needs it to change user)
//
// Differences from a real `docker build`, on purpose: the clone holds what is committed (a build
// context would hold uncommitted files too); pnpm comes from `npx pnpm@10` instead of `npm install -g`;
// the config's host is 127.0.0.1 instead of 0.0.0.0 so nothing listens beyond loopback.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execForm as exec, freePort, parseDockerfile, progress } from './image-tools.mjs';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DOCKERFILE = join(ROOT, 'deploy/Dockerfile');
/** The `node` user of the official Node images. */
const NODE_UID = 1000;
const keep = process.argv.includes('--keep');

const { fail, step } = progress('check-image');

function until(check, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  return (async () => {
    for (;;) {
      if (await check()) return;
      if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
}

if (process.getuid?.() !== 0) fail('run as root: setpriv must switch to uid 1000 as the image does');
const stages = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
if (stages.length !== 2) fail(`expected two stages, found ${stages.length}`);
const [build, runtime] = stages;

// 1. Every COPY source exists in the build context and is not left out by .dockerignore.
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
for (const { op, args } of [...build.steps, ...runtime.steps]) {
  if (op !== 'COPY' || args.startsWith('--from=')) continue;
  const sources = args.split(/\s+/).slice(0, -1);
  for (const source of sources) {
    if (!existsSync(join(ROOT, source))) fail(`COPY source "${source}" does not exist`);
    if (source !== '.' && ignored.some((rule) => rule.replace(/^\*\*\//, '') === source.replace(/\/$/, '')))
      fail(`COPY source "${source}" is excluded by .dockerignore`);
  }
}
step('every COPY source exists and is in the build context');

const scratch = mkdtempSync(join(tmpdir(), 'sluice-image-'));
chmodSync(scratch, 0o755);
const children = [];
const cleanUp = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (!keep) rmSync(scratch, { recursive: true, force: true });
};
process.on('exit', cleanUp);

// 2. The build stage, replayed in a fresh clone (WORKDIR /src; /out is scratch/out).
const src = join(scratch, 'src');
const out = join(scratch, 'out');
execFileSync('git', ['clone', '--quiet', '--no-local', ROOT, src], { stdio: 'inherit' });
const shims = join(scratch, 'bin');
mkdirSync(shims);
writeFileSync(join(shims, 'pnpm'), '#!/bin/sh\nexec npx -y pnpm@10 "$@"\n', { mode: 0o755 });
for (const { op, args } of build.steps) {
  if (op !== 'RUN') continue;
  if (/npm install -g pnpm/.test(args)) continue; // the shim stands for it
  const command = args.replace(/(^|\s)\/out\b/g, `$1${out}`);
  step(`RUN ${command.length > 120 ? `${command.slice(0, 117)}...` : command}`);
  execFileSync('/bin/sh', ['-c', command], {
    cwd: src,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PATH: `${shims}:${process.env.PATH}`, CI: '1' },
  });
}

// 3. The runtime stage: /out copied to /app, root-owned; a state folder the node user owns.
const app = join(scratch, 'app');
const state = join(scratch, 'state');
cpSync(out, app, { recursive: true });
mkdirSync(state);
chownSync(state, NODE_UID, NODE_UID);
const env = { PATH: process.env.PATH, HOME: state };
for (const { op, args } of runtime.steps) {
  if (op !== 'ENV') continue;
  const [, name, value] = /^(\S+?)[=\s](.*)$/.exec(args) ?? [];
  if (name) env[name] = value.replace('/var/lib/sluice', state);
}
const user = runtime.steps.filter((s) => s.op === 'USER').at(-1)?.args;
if (user !== 'node') fail(`the runtime stage runs as "${user}", not node`);
const entrypoint = exec(runtime.steps.find((s) => s.op === 'ENTRYPOINT')?.args ?? '[]');
const cmd = exec(runtime.steps.find((s) => s.op === 'CMD')?.args ?? '[]');
const healthcheck = exec(
  /CMD\s+(\[.*\])$/.exec(runtime.steps.find((s) => s.op === 'HEALTHCHECK')?.args ?? '')?.[1] ?? '[]',
);
if (healthcheck.length === 0) fail('the runtime stage has no HEALTHCHECK CMD');

const config = join(scratch, 'sluice.config.json');
const shipped = JSON.parse(readFileSync(join(ROOT, 'deploy/sluice.config.json'), 'utf8'));
shipped.listen.http.host = '127.0.0.1';
writeFileSync(config, JSON.stringify(shipped));
const map = (arg) => arg.replace(/^\/app\//, `${app}/`).replace('/etc/sluice/sluice.config.json', config);
const [gatewayPort, redisPort] = [await freePort(), await freePort()];
const redis = spawn(
  'redis-server',
  ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  {
    stdio: 'ignore',
  },
);
children.push(redis);
const adminKey = 'check-image-admin-key-0123456789';
Object.assign(env, {
  SLUICE_PORT: String(gatewayPort),
  SLUICE_AGENT_KEY: 'check-image-agent-key-0123456789',
  SLUICE_ADMIN_KEY: adminKey,
  SLUICE_APPROVAL_KEY: 'check-image-approval-key-0123456789abcdef',
  UPSTREAM_URL: 'http://127.0.0.1:9/mcp',
  // The image's HEALTHCHECK asks the container's own address; here the gateway listens on loopback only.
  SLUICE_HEALTHCHECK_HOST: '127.0.0.1',
  REDIS_URL: `redis://127.0.0.1:${redisPort}`,
});
const asNode = ['--reuid', String(NODE_UID), '--regid', String(NODE_UID), '--clear-groups'];
const command = [...entrypoint, ...cmd].map(map);
step(`as uid ${NODE_UID}: ${command.join(' ')}`);
let log = '';
const gateway = spawn('setpriv', [...asNode, ...command], { cwd: app, env, stdio: ['ignore', 'ignore', 'pipe'] });
children.push(gateway);
gateway.stderr.on('data', (chunk) => (log = (log + chunk).slice(-20_000)));
const exited = new Promise((ok) => gateway.once('exit', (code) => ok(code)));
void exited.then((code) => {
  if (!stopping) fail(`the gateway exited (${code}) before the checks ended:\n${log}`);
});
let stopping = false;

// 4. The image's own HEALTHCHECK, as the node user, until it passes.
const healthy = () =>
  new Promise((ok) => {
    const probe = spawn('setpriv', [...asNode, ...healthcheck.map(map)], { env, stdio: 'ignore' });
    probe.once('exit', (code) => ok(code === 0));
  });
await until(healthy, 'the HEALTHCHECK to pass', 60_000);
step('the HEALTHCHECK passes');
// setpriv execs the command: the pid is the gateway's node process itself.
const uids = /^Uid:\s+(.*)$/m
  .exec(readFileSync(`/proc/${gateway.pid}/status`, 'utf8'))?.[1]
  .trim()
  .split(/\s+/);
if (!uids || uids.some((id) => id !== String(NODE_UID)))
  fail(`the gateway runs as uids ${uids?.join(' ')}, not ${NODE_UID}`);

// 5. What an operator reaches: /readyz (503: the upstream is unreachable, and no secret in it), the console login.
const base = `http://127.0.0.1:${gatewayPort}`;
const ready = await fetch(`${base}/readyz`);
const readyBody = await ready.text();
if (ready.status !== 503) fail(`/readyz answered ${ready.status} with every upstream down`);
if (readyBody.includes(adminKey) || readyBody.includes('redis://')) fail('/readyz shows a secret');
const login = await fetch(`${base}/console/login`, {
  method: 'POST',
  redirect: 'manual',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ key: adminKey }).toString(),
});
if (login.status !== 303 || !/^sluice_console=/.test(login.headers.get('set-cookie') ?? ''))
  fail(`the console login answered ${login.status}`);
step('/readyz answers 503 without secrets; the console login hands out a session');

// 6. SIGTERM drains and exits 0.
stopping = true;
gateway.kill('SIGTERM');
const code = await exited;
if (code !== 0) fail(`the gateway exited ${code} on SIGTERM:\n${log}`);
redis.kill('SIGTERM');
step(`passed${keep ? `; kept ${scratch}` : ''}`);
