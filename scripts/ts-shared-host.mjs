// What the scripts that build one TypeScript program per package in one process (check-code.mjs, build-all.mjs)
// share: a compiler host factory whose hosts share parsed source files, so that node's types, the SDK and zod are
// parsed once instead of once per program (as an editor's language service does), and how diagnostics name files.
// A parsed file is keyed by everything that changes how it parses; a file asked for anew
// (`shouldCreateNewSourceFile`) is parsed again.
import ts from 'typescript';

/** Returns `compilerHost(options)`, making hosts that share one cache of parsed files. */
export function sharedCompilerHosts() {
  const sourceFiles = new Map();
  return function compilerHost(options) {
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
  };
}

/** How `ts.formatDiagnostics*` names files and ends lines: as tsc does, relative to the working directory. */
export const formatHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};
