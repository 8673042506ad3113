// Type-checks and lints the workspace in one process, on one TypeScript
// program per tsconfig.json.
//
//   node scripts/check-code.mjs            types and lint (pnpm check:code; what pnpm test and CI run)
//   node scripts/check-code.mjs --types    types only (pnpm typecheck)
//   node scripts/check-code.mjs --lint     lint only (pnpm lint:code); --fix writes eslint's fixes
//
// Types: every file is checked in the program of the tsconfig.json whose
// `include` lists it, under that file's options, as `tsc -p <tsconfig>
// --noEmit` would. Packages see each other's sources (condition
// sluice:source), so `tsc -p` per tsconfig checked core's sources again in
// every program that imports them, and parsed the same libraries (node, the
// SDK, zod) fourteen-odd times. Here the other packages' files still take part
// in each program as types, but are only reported in their own; a file that no
// tsconfig.json includes is checked in every program that reaches it. Parsed
// files are shared between the programs (as an editor's language service
// shares them), keyed by everything that changes how a file parses.
// SLUICE_TYPECHECK_EVERY_FILE=1 checks every file in every program that
// reaches it (what `tsc -p` per tsconfig.json does), to compare the two.
//
// Lint: eslint.config.mjs with no warnings allowed. typescript-eslint's
// type-aware rules run on the same program the types were checked in (the
// program of the file's own tsconfig.json, which is also the one its project
// service would pick), so the checker's work is done once for both: one
// process took about half the CPU time of eslint's project service beside a
// separate type check. Each TypeScript file is linted with its own project;
// then the JavaScript files (linted without types) in one pass.
import { existsSync, readdirSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { formatHost, sharedCompilerHosts } from './ts-shared-host.mjs';

const flags = new Set(process.argv.slice(2));
for (const flag of flags) {
  if (!['--types', '--lint', '--fix'].includes(flag)) {
    process.stderr.write(`check-code: unknown option ${flag} (expected --types, --lint or --fix)\n`);
    process.exit(2);
  }
}
const both = !flags.has('--types') && !flags.has('--lint');
const checkTypes = both || flags.has('--types');
const lint = both || flags.has('--lint');
const fix = flags.has('--fix');
const everyFile = process.env.SLUICE_TYPECHECK_EVERY_FILE === '1';

const projects = [
  'tsconfig.json',
  ...['packages', 'examples'].flatMap((dir) =>
    readdirSync(dir)
      .map((name) => join(dir, name, 'tsconfig.json'))
      .filter((file) => existsSync(file)),
  ),
];

// Parse every tsconfig.json first, so that each file's own project is known.
const configs = projects.map((project) => {
  const diagnostics = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(
    resolve(project),
    { noEmit: true },
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => diagnostics.push(diagnostic) },
  );
  return { project, parsed, diagnostics };
});
const owner = new Map();
for (const { project, parsed } of configs) {
  for (const fileName of parsed?.fileNames ?? []) owner.set(resolve(fileName), project);
}

// One parsed source file per file and parse mode, shared by all programs.
const compilerHost = sharedCompilerHosts();

/** The diagnostics `tsc` would print for the files `project` owns, in its order. */
function typeDiagnostics(project, program, diagnostics) {
  // Configuration, syntax, options and globals, then types.
  diagnostics.push(...program.getConfigFileParsingDiagnostics());
  const before = diagnostics.length;
  diagnostics.push(...program.getSyntacticDiagnostics());
  if (diagnostics.length !== before) return;
  diagnostics.push(...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics());
  if (diagnostics.length !== before) return;
  for (const sourceFile of program.getSourceFiles()) {
    const fileOwner = owner.get(resolve(sourceFile.fileName));
    if (everyFile || fileOwner === project || fileOwner === undefined) {
      diagnostics.push(...program.getSemanticDiagnostics(sourceFile));
    }
  }
}

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);
const lintResults = [];
/** Lints `files` with `eslint`, keeping the results (and writing fixes with --fix). */
async function lintWith(eslint, files) {
  const results = await eslint.lintFiles(files);
  if (fix) await ESLint.outputFixes(results);
  lintResults.push(...results);
}

let failedProjects = 0;
for (const { project, parsed, diagnostics } of configs) {
  if (parsed !== undefined) {
    const program = ts.createProgram({
      rootNames: parsed.fileNames,
      options: parsed.options,
      projectReferences: parsed.projectReferences,
      host: compilerHost(parsed.options),
      configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
    });
    if (checkTypes) typeDiagnostics(project, program, diagnostics);
    if (lint) {
      const eslint = new ESLint({
        fix,
        overrideConfig: { languageOptions: { parserOptions: { projectService: false, programs: [program] } } },
      });
      const files = [];
      for (const file of parsed.fileNames) {
        // A file two tsconfig.json files include is linted once, in the project that owns it (as for types).
        if (owner.get(resolve(file)) !== project || !TYPESCRIPT.has(extname(file))) continue;
        if (!(await eslint.isPathIgnored(file))) files.push(file);
      }
      if (files.length > 0) await lintWith(eslint, files);
    }
  }
  if (!checkTypes) {
    // A tsconfig.json that does not parse still fails the lint: its files would go unlinted.
    if (parsed === undefined) {
      process.stdout.write(ts.formatDiagnostics(diagnostics, formatHost));
      failedProjects++;
    }
    continue;
  }
  const errors = diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) failedProjects++;
  process.stdout.write(`${errors.length === 0 ? 'ok  ' : 'FAIL'} ${project}\n`);
  if (diagnostics.length > 0) process.stdout.write(ts.formatDiagnostics(diagnostics, formatHost));
}

/** The TypeScript files under `dir` that eslint.config.mjs lints (dist/ and node_modules/ skipped early). */
async function lintedTypeScript(eslint, dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist' && entry.name !== '.git') {
        await lintedTypeScript(eslint, path, out);
      }
    } else if (TYPESCRIPT.has(extname(entry.name)) && !(await eslint.isPathIgnored(path))) {
      out.push(resolve(path));
    }
  }
  return out;
}

let lintFailed = false;
if (lint) {
  // A TypeScript file in no tsconfig.json would be in no program above: name it rather than skip it.
  const orphans = (await lintedTypeScript(new ESLint(), '.')).filter((file) => !owner.has(file));
  for (const file of orphans) process.stdout.write(`FAIL ${file}: in no tsconfig.json, so it was not linted\n`);
  if (orphans.length > 0) lintFailed = true;
  // JavaScript files are linted without type information (eslint.config.mjs), so with no program.
  await lintWith(new ESLint({ fix, errorOnUnmatchedPattern: false }), ['**/*.js', '**/*.mjs', '**/*.cjs']);
  const errors = lintResults.reduce((sum, result) => sum + result.errorCount, 0);
  const warnings = lintResults.reduce((sum, result) => sum + result.warningCount, 0);
  const report = (await new ESLint().loadFormatter('stylish')).format(lintResults);
  if (report) process.stdout.write(report);
  lintFailed ||= errors > 0 || warnings > 0;
  process.stdout.write(
    `${errors > 0 || warnings > 0 ? 'FAIL' : 'ok  '} eslint: ${lintResults.length} files, ${errors} errors, ${warnings} warnings` +
      `${warnings > 0 && errors === 0 ? ' (no warnings are allowed)' : ''}\n`,
  );
}
process.exitCode = failedProjects > 0 || lintFailed ? 1 : 0;
