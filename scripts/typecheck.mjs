// Type-checks every package and example with its tsconfig.json (sources and
// tests, type tests included), in one process, one program per tsconfig.json.
//
// Every file is checked in the program of the tsconfig.json whose `include`
// lists it, under that file's options, as `tsc -p <tsconfig> --noEmit` would.
// Packages see each other's sources (condition sluice:source), so `tsc -p` per
// tsconfig checked core's sources again in every program that imports them,
// and parsed the same libraries (node, the SDK, zod) fourteen-odd times. Here
// the other packages' files still take part in each program as types, but are
// only reported in their own; a file that no tsconfig.json includes is
// checked in every program that reaches it, as before. Parsed files are
// shared between the programs (as an editor's language service shares them),
// keyed by everything that changes how a file parses.
//
// SLUICE_TYPECHECK_EVERY_FILE=1 checks every file in every program that
// reaches it (what `tsc -p` per tsconfig.json does), to compare the two.
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const projects = [
  'tsconfig.json',
  ...['packages', 'examples'].flatMap((dir) =>
    readdirSync(dir)
      .map((name) => join(dir, name, 'tsconfig.json'))
      .filter((file) => existsSync(file)),
  ),
];
const everyFile = process.env.SLUICE_TYPECHECK_EVERY_FILE === '1';

const formatHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};

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
const sourceFiles = new Map();
function compilerHost(options) {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
    const mode =
      typeof languageVersionOrOptions === 'object'
        ? `${languageVersionOrOptions.languageVersion}:${languageVersionOrOptions.impliedNodeFormat}:${languageVersionOrOptions.jsDocParsingMode}`
        : `${languageVersionOrOptions}`;
    const key = `${mode}:${fileName}`;
    let sourceFile = shouldCreateNewSourceFile ? undefined : sourceFiles.get(key);
    if (sourceFile === undefined) {
      sourceFile = getSourceFile(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile);
      if (sourceFile !== undefined) sourceFiles.set(key, sourceFile);
    }
    return sourceFile;
  };
  return host;
}

let failed = 0;
for (const { project, parsed, diagnostics } of configs) {
  if (parsed !== undefined) {
    const program = ts.createProgram({
      rootNames: parsed.fileNames,
      options: parsed.options,
      projectReferences: parsed.projectReferences,
      host: compilerHost(parsed.options),
      configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
    });
    // The order of `tsc`: configuration, syntax, options and globals, then types.
    diagnostics.push(...program.getConfigFileParsingDiagnostics());
    const before = diagnostics.length;
    diagnostics.push(...program.getSyntacticDiagnostics());
    if (diagnostics.length === before) {
      diagnostics.push(...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics());
      if (diagnostics.length === before) {
        for (const sourceFile of program.getSourceFiles()) {
          const fileOwner = owner.get(resolve(sourceFile.fileName));
          if (everyFile || fileOwner === project || fileOwner === undefined) {
            diagnostics.push(...program.getSemanticDiagnostics(sourceFile));
          }
        }
      }
    }
  }
  const errors = diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) failed++;
  process.stdout.write(`${errors.length === 0 ? 'ok  ' : 'FAIL'} ${project}\n`);
  if (diagnostics.length > 0) process.stdout.write(ts.formatDiagnostics(diagnostics, formatHost));
}
process.exitCode = failed > 0 ? 1 : 0;
