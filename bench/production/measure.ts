// The timed loop of the out-of-process benchmarks (production.bench.ts, peers.bench.ts): every target
// driven by its own keep-alive session at each level of calls in flight, targets alternating round by
// round (who goes first rotates), CPU per call read from each target's process around its own rounds.
import type { Session } from './load.js';

/** A target as the loop sees it: a name and its process's CPU time so far, in µs. */
export interface Measured {
  readonly name: string;
  cpu(): Promise<number>;
}

export interface MeasureSettings {
  readonly warmup: number;
  readonly rounds: number;
  readonly perRound: number;
  readonly concurrency: readonly number[];
}

export interface Figures {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly callsPerSec: number;
  readonly cpuUsPerCall: number;
}

/**
 * The settings of a run: BENCH_QUICK=1 for a short one, BENCH_ROUNDS and BENCH_PER_ROUND override the
 * rounds and the calls per round.
 */
export function settingsFromEnv(full: MeasureSettings): MeasureSettings & { readonly quick: boolean } {
  const quick = process.env.BENCH_QUICK === '1';
  const rounds = Number(process.env.BENCH_ROUNDS ?? 0);
  const perRound = Number(process.env.BENCH_PER_ROUND ?? 0);
  return {
    ...(quick ? { warmup: 200, rounds: 3, perRound: 160, concurrency: full.concurrency } : full),
    ...(rounds > 0 ? { rounds } : {}),
    ...(perRound > 0 ? { perRound } : {}),
    quick,
  };
}

/** Figures by level of calls in flight (as a string), then by target name. */
export type Results = Record<string, Record<string, Figures>>;

/** `calls` calls spread over `inFlight` workers; latencies in µs. */
async function drive(session: Session, calls: number, inFlight: number, latencies: number[] | undefined) {
  let left = calls;
  const worker = async () => {
    while (left-- > 0) {
      const t0 = process.hrtime.bigint();
      await session.call();
      latencies?.push(Number(process.hrtime.bigint() - t0) / 1_000);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

/** Measures every target with its session (same index) at every level of the settings. */
export async function measure(
  targets: readonly Measured[],
  sessions: readonly Session[],
  settings: MeasureSettings,
  progress?: (text: string) => void,
): Promise<{ results: Results; rows: Record<string, string | number>[] }> {
  const rows: Record<string, string | number>[] = [];
  const results: Results = {};
  for (const inFlight of settings.concurrency) {
    progress?.(`${inFlight} in flight`);
    for (const session of sessions) await drive(session, settings.warmup, inFlight, undefined);
    const samples = targets.map(() => ({ latencies: [] as number[], wallNs: 0n, cpuUs: 0, calls: 0 }));
    for (let r = 0; r < settings.rounds; r++) {
      for (let k = 0; k < targets.length; k++) {
        const i = (r + k) % targets.length;
        const sample = samples[i]!;
        const cpu0 = await targets[i]!.cpu();
        const t0 = process.hrtime.bigint();
        await drive(sessions[i]!, settings.perRound, inFlight, sample.latencies);
        sample.wallNs += process.hrtime.bigint() - t0;
        sample.cpuUs += (await targets[i]!.cpu()) - cpu0;
        sample.calls += settings.perRound;
      }
    }
    const byName: Record<string, Figures> = {};
    targets.forEach((t, i) => {
      const s = samples[i]!;
      const sorted = s.latencies.sort((a, b) => a - b);
      byName[t.name] = {
        p50Us: Math.round(percentile(sorted, 50)),
        p99Us: Math.round(percentile(sorted, 99)),
        callsPerSec: Math.round(s.calls / (Number(s.wallNs) / 1e9)),
        cpuUsPerCall: Math.round(s.cpuUs / s.calls),
      };
      rows.push({ 'in flight': inFlight, target: t.name, ...byName[t.name] });
    });
    results[String(inFlight)] = byName;
  }
  return { results, rows };
}
