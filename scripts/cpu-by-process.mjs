// Where a CI run's CPU time goes, by kind of process: every process's CPU time (user + system, from Linux's
// /proc/<pid>/stat) is read once a second, and what each used since the last reading is added to its kind, named
// from its command line (vitest's workers, `sluice serve`, the test fixtures, chromium, npm, tsc...). Sent SIGTERM
// or SIGINT, it prints the kinds by CPU time, with how many processes of each it saw start, beside what the whole
// machine used over the same time: a process that lives less than a second is partly missed, and the difference
// says how much. Linux only; elsewhere it says so and exits. A summary at the end of CI, not a gate.
// Usage: node scripts/cpu-by-process.mjs & ... ; kill -TERM $!
import { existsSync, readFileSync, readdirSync } from 'node:fs';

const INTERVAL_MS = 1_000;
/** Linux's USER_HZ, the unit of /proc's CPU times: 100 on x86 and ARM. */
const TICKS_PER_SECOND = 100;
const SHOWN = 20;

if (!existsSync('/proc/stat')) {
  console.log('CPU by kind of process: not measured (no /proc here)');
  process.exit(0);
}

/** Kinds, first match wins; a function names the kind from the match. */
const KINDS = [
  [/gateway\/(?:dist|src)\/cli\.(?:js|ts)\s+serve/, 'sluice serve (the gateway under test)'],
  [/gateway\/(?:dist|src)\/cli\.(?:js|ts)/, 'sluice, other commands'],
  [/\/vitest\/dist\/workers|vitest\/dist\/chunks|tinypool/, 'vitest workers'],
  [/vitest(?:\.mjs)? run|vitest-built/, 'vitest main'],
  [
    /(fixtures\/[\w.-]+|demo-upstream\.mjs|test\/mesh\.ts)/,
    (m, line) => `fixture ${m[1]}${line.includes('sluice:source') ? ', from source' : ''}`,
  ],
  [/server-everything|server-filesystem|conformance/, 'third-party servers and the conformance suite'],
  [/redis-server/, 'redis-server'],
  [/haproxy/, 'haproxy'],
  [/chrom/, 'chromium'],
  [/check-code/, 'check-code (tsc and eslint)'],
  [/typescript\/bin\/tsc|\btsc\b/, "tsc (the build's declarations, the consumers' projects)"],
  [/prettier/, 'prettier'],
  [/arethetypeswrong|publint|check-packages/, 'check:packages'],
  [/build-all|build-package|esbuild/, 'build and bundles'],
  [/consumers-adopt/, 'consumers-adopt'],
  [/consumers|first-hour/, 'consumers and first hour'],
  [/\bnpm\b|\bnpx\b|pnpm/, 'npm and pnpm'],
  [/cpu-by-process/, 'this script'],
];

function kindOf(commandLine) {
  const line = commandLine.replace(/\0/g, ' ').trim();
  for (const [pattern, name] of KINDS) {
    const match = pattern.exec(line);
    if (match) return typeof name === 'function' ? name(match, line) : name;
  }
  // Kernel threads have no command line.
  if (line === '') return 'kernel threads';
  return `other: ${line.split(' ').slice(0, 2).join(' ').slice(0, 60)}`;
}

function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  // user, nice, system, irq, softirq: busy; idle and iowait are not.
  return fields[0] + fields[1] + fields[2] + fields[5] + fields[6];
}

/** pid → its CPU ticks at the last reading, and its kind. */
const seen = new Map();
/** kind → { ticks, started } */
const kinds = new Map();
let first = true;

function read() {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The fields after the command name, which may itself hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      let entry = seen.get(pid);
      if (entry === undefined || ticks < entry.ticks) {
        // A process already running at the first reading counts from then on; a later one from its start.
        entry = { ticks: first ? ticks : 0, kind: kindOf(readFileSync(`/proc/${pid}/cmdline`, 'utf8')) };
        seen.set(pid, entry);
        const kind = kinds.get(entry.kind) ?? { ticks: 0, started: 0 };
        if (!first) kind.started++;
        kinds.set(entry.kind, kind);
      }
      kinds.get(entry.kind).ticks += ticks - entry.ticks;
      entry.ticks = ticks;
    } catch {
      // The process ended between the listing and the reading.
    }
  }
  first = false;
}

const startedAt = Date.now();
const machineAtStart = machineTicks();
read();
const timer = setInterval(read, INTERVAL_MS);

function report() {
  clearInterval(timer);
  read();
  const seconds = (ticks) => ticks / TICKS_PER_SECOND;
  const machine = seconds(machineTicks() - machineAtStart);
  const rows = [...kinds].filter(([, kind]) => kind.ticks > 0).sort((a, b) => b[1].ticks - a[1].ticks);
  const counted = rows.reduce((sum, [, kind]) => sum + seconds(kind.ticks), 0);
  console.log(
    `over ${Math.round((Date.now() - startedAt) / 1000)} s the machine was busy ${Math.round(machine)} CPU-s; ` +
      `${Math.round(counted)} of them are counted here (the rest: processes shorter than a second, the kernel)`,
  );
  console.log('  CPU-s  started  kind');
  for (const [name, kind] of rows.slice(0, SHOWN)) {
    console.log(`${seconds(kind.ticks).toFixed(1).padStart(7)}  ${String(kind.started).padStart(7)}  ${name}`);
  }
  process.exit(0);
}
process.once('SIGTERM', report);
process.once('SIGINT', report);
