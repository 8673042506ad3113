// Checks what each package would publish: publint (package.json against the
// files it ships) and arethetypeswrong (types and JS resolve alike for ESM and
// CommonJS consumers, TypeScript node16 from either module kind and bundler).
// Needs a build first. Usage: node scripts/check-packages.mjs
//
// Accepted exception: attw runs with its node16 profile, which leaves out the
// node10 resolution (`moduleResolution: node`, TypeScript's pre-exports mode).
// Every root entry point resolves there too (main/types); subpaths such as
// @sluice/core/internal cannot without exports, which node10 does not read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { packAll, root, run } from './pack.mjs';

const attwCli = join(root, 'node_modules/@arethetypeswrong/cli/dist/index.js');
const work = mkdtempSync(join(tmpdir(), 'sluice-check-'));
let failures = 0;
try {
  const tarballs = packAll(join(work, 'tarballs'));
  for (const [name, tarball] of tarballs) {
    const dir = join(work, 'unpacked', name);
    run('mkdir', ['-p', dir]);
    run('tar', ['xzf', tarball, '-C', dir, '--strip-components=1']);
    const { messages, pkg } = await publint({ pkgDir: dir, pack: false, strict: true });
    const lines = messages.map((m) => `  publint ${m.type}: ${formatMessage(m, pkg) ?? m.code}`);
    const attw = spawnSync(process.execPath, [attwCli, tarball, '--profile', 'node16', '--format', 'json'], {
      cwd: root,
      encoding: 'utf8',
    });
    const report = JSON.parse(attw.stdout);
    const problems = Object.values(report.problems ?? {})
      .flat()
      .filter((problem) => problem.resolutionKind !== 'node10');
    for (const problem of problems) {
      lines.push(`  attw ${problem.kind}: ${problem.entrypoint ?? ''} (${problem.resolutionKind ?? 'all'})`);
    }
    failures += lines.length;
    process.stdout.write(`${lines.length === 0 ? 'ok  ' : 'FAIL'} ${name}\n${lines.map((l) => `${l}\n`).join('')}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures > 0) {
  process.stderr.write(`check:packages: ${failures} problem(s)\n`);
  process.exitCode = 1;
}
