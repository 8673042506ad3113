// The slowest test files of a vitest run, from its JSON report (`--reporter=json --outputFile.json=<file>`), and the
// files that ended last: a long file started late keeps one worker busy after the others have nothing left to run.
// Usage: node scripts/slowest-tests.mjs <report.json> [count, default 10]
// A missing or unreadable report is said so (exit 0): this is a summary at the end of CI, not a gate.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [file, countText = '10'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/slowest-tests.mjs <report.json> [count]');
  process.exit(2);
}
const count = Number.parseInt(countText, 10);
if (!Number.isInteger(count) || count < 1) {
  console.error(`count must be a positive integer, not "${countText}"`);
  process.exit(2);
}

let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`slowest test files: no report (${error instanceof Error ? error.message : String(error)})`);
  process.exit(0);
}

/** Seconds a file took: from its start to its end as the reporter saw them; its tests' sum when those are missing. */
function secondsOf(result) {
  if (Number.isFinite(result.startTime) && Number.isFinite(result.endTime) && result.endTime >= result.startTime)
    return (result.endTime - result.startTime) / 1000;
  const tests = Array.isArray(result.assertionResults) ? result.assertionResults : [];
  return tests.reduce((sum, test) => sum + (Number.isFinite(test.duration) ? test.duration : 0), 0) / 1000;
}

const files = (Array.isArray(report.testResults) ? report.testResults : [])
  .filter((result) => typeof result?.name === 'string')
  .map((result) => ({
    name: relative(process.cwd(), result.name),
    seconds: secondsOf(result),
    tests: Array.isArray(result.assertionResults) ? result.assertionResults.length : 0,
    status: typeof result.status === 'string' ? result.status : '?',
    start: Number.isFinite(result.startTime) ? result.startTime : undefined,
    end: Number.isFinite(result.endTime) ? result.endTime : undefined,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const total = files.reduce((sum, f) => sum + f.seconds, 0);
console.log(
  `=== the ${Math.min(count, files.length)} slowest of ${files.length} test files (${total.toFixed(0)} s summed) ===`,
);
for (const f of files.slice(0, count))
  console.log(
    `${f.seconds.toFixed(1).padStart(7)} s  ${String(f.tests).padStart(4)} tests  ${f.status.padEnd(6)} ${f.name}`,
  );

const timed = files.filter((f) => f.start !== undefined && f.end !== undefined);
if (timed.length > 0) {
  const first = Math.min(...timed.map((f) => f.start));
  const last = [...timed].sort((a, b) => b.end - a.end).slice(0, 5);
  console.log('=== the 5 files that ended last (seconds after the first file started) ===');
  for (const f of last)
    console.log(
      `${((f.start - first) / 1000).toFixed(0).padStart(5)} → ${((f.end - first) / 1000).toFixed(0).padStart(4)} s  ${f.name}`,
    );
}
