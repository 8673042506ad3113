// A soak: drives one target with many calls and reports its heap (after a full collection) at checkpoints, to
// find memory a call leaves behind. The target runs with --expose-gc; the number that matters is the growth
// per call between the later checkpoints (the first ones include warm-up and caches filling).
// Run: node --conditions=sluice:source --import tsx bench/production/soak.ts <kind> [calls per step] [steps] [in flight] [http|stdio]
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openSession } from './load.js';

const TARGET = fileURLToPath(new URL('./target.ts', import.meta.url));
const [kind = 'sluice-none', stepArg = '10000', stepsArg = '5', inFlightArg = '16', over = 'http'] =
  process.argv.slice(2);

function start(args: string[]) {
  const child = fork(TARGET, args, {
    execArgv: ['--expose-gc', '--conditions=sluice:source', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise<{ child: typeof child; url: URL }>((resolve) =>
    child.once('message', (m: { url: string }) => resolve({ child, url: new URL(m.url) })),
  );
}

const heapOf = (child: ReturnType<typeof fork>) =>
  new Promise<number>((resolve) => {
    const listen = (m: { heap?: number; unsettled?: number }) => {
      if (m.heap === undefined) return;
      child.off('message', listen);
      process.stdout.write(`  (straight after a collection: ${((m.unsettled ?? 0) / 1024).toFixed(0)} KiB)\n`);
      resolve(m.heap);
    };
    child.on('message', listen);
    child.send('heap');
  });

const snapshot = (child: ReturnType<typeof fork>, path: string) =>
  new Promise<void>((resolve) => {
    const listen = (m: { snapshot?: string }) => {
      if (m.snapshot === undefined) return;
      child.off('message', listen);
      resolve();
    };
    child.on('message', listen);
    child.send({ snapshot: path });
  });

const upstream = await start(['upstream']);
const target = await start([kind, over === 'stdio' ? 'stdio' : upstream.url.href]);
const inFlight = Number(inFlightArg);
const session = await openSession(target.url, inFlight);
const step = Number(stepArg);
const heaps: number[] = [await heapOf(target.child)];
process.stdout.write(`calls 0: heap ${(heaps[0]! / 1024).toFixed(0)} KiB\n`);
for (let s = 1; s <= Number(stepsArg); s++) {
  let left = step;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (left-- > 0) await session.call();
    }),
  );
  heaps.push(await heapOf(target.child));
  if (process.env.SOAK_SNAPSHOTS) await snapshot(target.child, `${process.env.SOAK_SNAPSHOTS}/soak-${s}.heapsnapshot`);
  const grew = (heaps[s]! - heaps[s - 1]!) / step;
  process.stdout.write(
    `calls ${s * step}: heap ${(heaps[s]! / 1024).toFixed(0)} KiB, ${grew.toFixed(1)} B per call since the last\n`,
  );
}
session.close();
target.child.kill();
upstream.child.kill();
