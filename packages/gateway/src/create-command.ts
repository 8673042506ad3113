import { mkdir, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { VERSION as CORE_VERSION } from '@sluice/core';
import { GatewayErrorCode, configError } from './errors.js';
import { pluginFiles } from './create-templates.js';
import type { PluginNames } from './create-templates.js';

/** What `sluice create` can make. */
export const CREATE_KINDS = ['plugin'] as const;
export type CreateKind = (typeof CREATE_KINDS)[number];

/** npm's limit is 214; a plugin's name (the package name) is at most 100 characters. */
const MAX_NAME = 100;
/** An npm package name that needs no escaping anywhere: lower case, an optional scope. */
const PACKAGE_NAME = /^(?:@([a-z0-9][a-z0-9._-]*)\/)?([a-z0-9][a-z0-9._-]*)$/;

/** Why `name` cannot be the package's name, or undefined when it can. */
export function packageNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'the name is empty';
  if (name.length > MAX_NAME) return `the name is longer than ${MAX_NAME} characters`;
  if (name !== name.toLowerCase()) return 'npm package names are lower case';
  const match = PACKAGE_NAME.exec(name);
  if (match === null)
    return 'use letters a-z, digits, "-", "." and "_", starting with a letter or digit, with an optional "@scope/"';
  const bare = match[2] ?? '';
  if (bare === 'node_modules' || bare === 'favicon.ico') return `"${bare}" is reserved by npm`;
  if (match[1] === undefined && isBuiltin(bare)) return `"${bare}" is the name of a Node.js built-in module`;
  if (!/[a-z]/.test(bare)) return 'the name needs at least one letter';
  return undefined;
}

/** The identifiers a package name gives the scaffold: `@acme/sluice-rate-note` is `rateNotePlugin`... */
export function pluginNames(name: string): PluginNames {
  const bare = name.replace(/^@[^/]+\//, '');
  const stem = bare.replace(/^sluice-(?:plugin-)?/, '') || bare;
  const words = stem.split(/[^a-z0-9]+/).filter((word) => word !== '');
  const lead = /^[0-9]/.test(words[0] ?? '') ? ['plugin'] : [];
  const all = [...lead, ...words];
  const pascal = all.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
  return {
    packageName: name,
    folder: bare,
    factory: `${pascal.charAt(0).toLowerCase()}${pascal.slice(1)}Plugin`,
    pascal,
    code: all.join('_').toUpperCase(),
    coreVersion: CORE_VERSION,
  };
}

/**
 * `sluice create plugin <name>`: writes a publishable plugin package in a new
 * folder (`dir`, or the name without its scope in the working directory) and
 * answers what to do next. An existing folder is never written into.
 */
export async function runCreateCommand(kind: CreateKind, name: string, dir: string | undefined): Promise<string> {
  const problem = packageNameProblem(name);
  if (problem !== undefined)
    throw configError(GatewayErrorCode.USAGE, `cannot create a ${kind} named ${JSON.stringify(name)}: ${problem}`);
  const names = pluginNames(name);
  const target = resolve(dir ?? names.folder);
  try {
    await mkdir(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    if (code === 'EEXIST')
      throw configError(
        GatewayErrorCode.USAGE,
        `${target} already exists; nothing was written. Pick another folder with --dir, or remove it`,
      );
    if (code === 'ENOENT')
      throw configError(GatewayErrorCode.USAGE, `cannot create ${target}: its parent folder does not exist`);
    throw error;
  }
  const files = pluginFiles(names);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(target, path, '..'), { recursive: true });
    await writeFile(join(target, path), text, { flag: 'wx' });
  }
  const shown = relative(process.cwd(), target) || '.';
  return `wrote the plugin package ${name} in ${target}:
  ${Object.keys(files).join('\n  ')}
Next:
  cd ${shown}
  npm install                 (@sluice/core as a dev copy, @sluice/testing, TypeScript and vitest)
  npm test                    (test/plugin.test.ts, with @sluice/testing)
  npm run build               (dist/ with declarations)
  npm pack                    (the tarball; install it beside the gateway:
                               npm install ./${tarballName(name)} where @sluice/gateway is installed,
                               or npm install -g ./${tarballName(name)} next to a global one)
Then name it in sluice.config.json:
  "plugins": { "custom": [{ "module": "${name}", "export": "${names.factory}", "options": { "refuse": [] } }] }
`;
}

/** The file `npm pack` writes for version 0.1.0 of `name`. */
function tarballName(name: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-0.1.0.tgz`;
}
