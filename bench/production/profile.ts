// Profiles one target under load: node --cpu-prof in the target, then a summary of where its CPU went.
// Run: node --conditions=sluice:source --import tsx bench/production/profile.ts <kind> [calls] [in flight] [http|stdio]
import { fork } from 'node:child_process';
import { readFileSync, readdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession } from './load.js';

const TARGET = fileURLToPath(new URL('./target.ts', import.meta.url));
const [kind = 'sluice-none', callsArg = '4000', inFlightArg = '16', over = 'http'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'sluice-prof-'));

function start(args: string[], prof: boolean) {
  const child = fork(TARGET, args, {
    execArgv: [
      '--conditions=sluice:source',
      '--import',
      'tsx',
      ...(prof
        ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${process.env.PROF_INTERVAL_US ?? '1000'}`]
        : []),
    ],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<{ child: typeof child; url: URL }>((resolve) =>
    child.once('message', (m: { url: string }) => resolve({ child, url: new URL(m.url) })),
  );
}

const upstream = await start(['upstream'], false);
const target = await start([kind, over === 'stdio' ? 'stdio' : upstream.url.href], true);
const session = await openSession(target.url, 64);
let left = Number(callsArg);
await Promise.all(
  Array.from({ length: Number(inFlightArg) }, async () => {
    while (left-- > 0) await session.call();
  }),
);
session.close();
await new Promise<void>((resolve) => {
  target.child.once('exit', () => resolve());
  target.child.disconnect();
});
upstream.child.kill();

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[]; samples: number[] };
const self = new Map<number, number>();
for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const total = profile.samples.length;
// Self time per function, and inclusive time per package (the first frame of each package on the stack).
const selfBy = new Map<string, number>();
const inclusiveBy = new Map<string, number>();
const where = (n: Node) => {
  const url = n.callFrame.url;
  const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.includes('/packages/')) return `sluice:${url.split('/packages/')[1]!.split('/src/').join(':')}`;
  return url.startsWith('node:') ? url : n.callFrame.url === '' ? '(native)' : url.split('/').slice(-2).join('/');
};
for (const [id, count] of self) {
  const n = byId.get(id)!;
  const key = `${n.callFrame.functionName || '(anon)'} ${where(n)}:${n.callFrame.lineNumber}`;
  selfBy.set(key, (selfBy.get(key) ?? 0) + count);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const w = where(byId.get(at)!);
    const pkg = w.startsWith('sluice:') ? w.split(':').slice(0, 2).join(':') : w;
    if (seen.has(pkg)) continue;
    seen.add(pkg);
    inclusiveBy.set(pkg, (inclusiveBy.get(pkg) ?? 0) + count);
  }
}
const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
process.stdout.write(
  `profile ${join(dir, file)}\nsamples ${total}\n-- self --\n${top(selfBy, 40).join('\n')}\n-- inclusive by module --\n${top(inclusiveBy, 40).join('\n')}\n`,
);
process.exit(0);
