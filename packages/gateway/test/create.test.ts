// `sluice create plugin <name>`: the package it writes, the names it refuses, the folders it leaves alone.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION as CORE_VERSION } from '@sluice/core';
import type { Plugin } from '@sluice/core';
import { createTestKit, errorOf, textOf } from '@sluice/testing';
import { packageNameProblem, pluginNames, runCreateCommand } from '../src/create-command.js';
import { SCAFFOLD_DEV_TOOLS, SCAFFOLD_ZOD } from '../src/create-templates.js';
import { REPO_ROOT, runMain } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'sluice-create-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;
const fresh = () => join(scratch, `f${++folders}`);

const RESERVED =
  /^(?:break|case|catch|class|const|continue|debugger|default|delete|do|else|export|extends|finally|for|function|if|import|in|instanceof|new|return|super|switch|this|throw|try|typeof|var|void|while|with|yield|let|static|enum|await)$/;

describe('sluice create plugin', () => {
  it('writes a package to publish: @sluice/core as a peer, exports of dist/, a build, tsconfig, sources and a test', async () => {
    const dir = fresh();
    const run = await runMain(['create', 'plugin', '@acme/sluice-rate-note', '--dir', dir]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('npm install');
    expect(run.out).toContain('"module": "@acme/sluice-rate-note", "export": "rateNotePlugin"');
    expect(readdirSync(dir, { recursive: true }).map(String).sort()).toEqual(
      [
        '.gitignore',
        'README.md',
        'package.json',
        'src',
        'src/handler.ts',
        'src/index.ts',
        'test',
        'test/plugin.test.ts',
        'tsconfig.json',
      ].sort(),
    );
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    const [major, minor] = CORE_VERSION.split('.');
    expect(manifest).toMatchObject({
      name: '@acme/sluice-rate-note',
      type: 'module',
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      files: ['dist'],
      scripts: { build: 'tsc -p tsconfig.json', test: 'vitest run', prepack: 'npm run build' },
      peerDependencies: { '@sluice/core': `>=${major}.${minor}.0 <${Number(major) + 1}.0.0` },
      devDependencies: { '@sluice/core': `^${CORE_VERSION}`, '@sluice/testing': `^${CORE_VERSION}` },
    });
    expect(manifest.dependencies).toEqual({ zod: SCAFFOLD_ZOD });
    // The entry point builds its options with the kit's strict helper.
    const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
    expect(index).toContain('export const RateNoteOptions = pluginOptions({');
    expect(index).toContain('parseOptions(NAME, RateNoteOptions, options)');
    const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')) as { compilerOptions: unknown };
    expect(tsconfig.compilerOptions).toMatchObject({
      declaration: true,
      outDir: 'dist',
      rootDir: 'src',
      skipLibCheck: true,
    });
  });

  it('pins the dev tools and zod the workspace builds and tests with', () => {
    const workspace = readFileSync(join(REPO_ROOT, 'pnpm-workspace.yaml'), 'utf8');
    const catalog = (name: string) =>
      new RegExp(`^ {2}'?${name.replace(/[/@.]/g, '\\$&')}'?: (\\S+)$`, 'm').exec(workspace)?.[1];
    for (const [name, range] of Object.entries({ ...SCAFFOLD_DEV_TOOLS, zod: SCAFFOLD_ZOD }))
      expect(range, name).toBe(catalog(name));
  });

  it('writes a plugin that type-checks, refuses what its options select, and refuses a misspelt option', async () => {
    // Inside a folder whose node_modules is the gateway's, as an installed package would see its dependencies.
    const project = fresh();
    mkdirSync(project);
    symlinkSync(join(REPO_ROOT, 'packages', 'gateway', 'node_modules'), join(project, 'node_modules'), 'dir');
    const dir = join(project, 'guard');
    await runCreateCommand('plugin', '@acme/guard', dir);
    execFileSync(
      process.execPath,
      [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--noEmit'],
      {
        stdio: 'pipe',
      },
    );
    const module = (await import(pathToFileURL(join(dir, 'src', 'index.ts')).href)) as Record<string, unknown>;
    const factory = module.guardPlugin as (options?: unknown) => Plugin;
    expect(module.default).toBe(factory);
    const codes = module.GuardErrorCode as { REFUSED: string };
    expect(codes.REFUSED).toBe('GUARD_REFUSED');
    const echo = {
      name: 'echo',
      handler: () => ({ content: [{ type: 'text' as const, text: 'ran' }] }),
    };
    const kit = await createTestKit({
      plugins: [factory({ refuse: ['drop_*'] })],
      tools: [echo, { ...echo, name: 'drop_all' }],
    });
    try {
      expect(textOf(await kit.call('echo', {}))).toBe('ran');
      expect(errorOf(await kit.call('drop_all', {}))?.code).toBe('GUARD_REFUSED');
    } finally {
      await kit.close();
    }
    expect(() => factory({ refuze: ['echo'] })).toThrow(/refuze/);
  }, 240_000);

  it('never writes into a folder that exists, empty or not', async () => {
    const dir = fresh();
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{"name":"mine"}');
    const kept = await runMain(['create', 'plugin', 'sluice-audit', '--dir', dir]);
    expect(kept.code).toBe(2);
    expect(kept.err).toContain(`${dir} already exists; nothing was written`);
    expect(readdirSync(dir)).toEqual(['package.json']);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe('{"name":"mine"}');
    const empty = fresh();
    mkdirSync(empty);
    expect((await runMain(['create', 'plugin', 'sluice-audit', '--dir', empty])).code).toBe(2);
    expect(readdirSync(empty)).toEqual([]);
    const orphan = join(fresh(), 'deeper');
    const noParent = await runMain(['create', 'plugin', 'sluice-audit', '--dir', orphan]);
    expect(noParent.err).toContain('its parent folder does not exist');
  });

  it.each([
    ['', 'empty'],
    ['Acme-Guard', 'lower case'],
    ['acme guard', 'use letters a-z'],
    ['../escape', 'use letters a-z'],
    ['@acme/../x', 'use letters a-z'],
    ['@acme/', 'use letters a-z'],
    ['.hidden', 'use letters a-z'],
    ['_private', 'use letters a-z'],
    ['fs', 'Node.js built-in'],
    ['node_modules', 'reserved by npm'],
    ['123', 'at least one letter'],
    ['x'.repeat(101), 'longer than 100'],
  ])('refuses the package name %j, saying why (%s), and writes nothing', async (name, why) => {
    const dir = fresh();
    const run = await runMain(['create', 'plugin', name, '--dir', dir]);
    expect(run.code).toBe(2);
    expect(run.err).toContain(`cannot create a plugin named ${JSON.stringify(name)}`);
    expect(run.err).toContain(why);
    expect(existsSync(dir)).toBe(false);
  });

  it('gives every accepted name a factory that is a JavaScript identifier and an error-code prefix', () => {
    const part = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/);
    fc.assert(
      fc.property(fc.option(part, { nil: undefined }), part, (scope, bare) => {
        const name = scope === undefined ? bare : `@${scope}/${bare}`;
        if (packageNameProblem(name) !== undefined) return;
        const names = pluginNames(name);
        expect(names.factory).toMatch(/^[a-z][A-Za-z0-9]*Plugin$/);
        expect(names.factory).not.toMatch(RESERVED);
        expect(names.pascal).toMatch(/^[A-Z][A-Za-z0-9]*$/);
        expect(names.code).toMatch(/^[A-Z][A-Z0-9_]*$/);
        expect(names.folder).toBe(bare);
      }),
    );
    // Anything else is refused with a reason.
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (name) => {
        const problem = packageNameProblem(name);
        if (problem === undefined) expect(name).toMatch(/^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/);
        else expect(problem.length).toBeGreaterThan(0);
      }),
    );
  });

  it('is used as `create plugin <one name>`', async () => {
    for (const args of [
      ['create'],
      ['create', 'widget', 'x'],
      ['create', 'plugin'],
      ['create', 'plugin', 'a', 'b'],
      ['create', 'plugin', 'a', '--json'],
      ['serve', '--dir', 'x'],
    ]) {
      const run = await runMain(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.err).toMatch(/create|--dir/);
    }
  });
});
