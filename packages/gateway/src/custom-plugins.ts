import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { messageOf } from '@sluice/core';
import type { Plugin } from '@sluice/core';
import type { GatewayConfig } from './config-schema.js';
import { GatewayErrorCode, configError } from './errors.js';

/** A plugin the config named by module, with where it came from. */
export interface CustomPlugin {
  readonly plugin: Plugin;
  /** The module as the config names it. */
  readonly module: string;
  /** Its place in the config, e.g. `plugins.custom[0]`. */
  readonly path: string;
}

type Factory = (options?: unknown) => unknown;

/**
 * Loads the plugins `plugins.custom` names: each entry's module (a package
 * name, resolved as the gateway itself resolves its imports, or a path,
 * relative to the config file's folder) exports a plugin factory, by default
 * as its default export or under `export`. The factory gets the entry's
 * `options` and validates them with its own schema. Every failure is a
 * `CONFIG_INVALID` that names the entry's place in the config.
 */
export async function loadCustomPlugins(config: GatewayConfig, baseDir = process.cwd()): Promise<CustomPlugin[]> {
  const loaded: CustomPlugin[] = [];
  for (const [index, entry] of (config.plugins.custom ?? []).entries()) {
    const path = `plugins.custom[${index}]`;
    const namespace = await importModule(entry.module, baseDir, path);
    const exportName = entry.export ?? 'default';
    const factory = namespace[exportName];
    if (typeof factory !== 'function') {
      const functions = Object.keys(namespace).filter((key) => typeof namespace[key] === 'function');
      throw configError(
        GatewayErrorCode.CONFIG_INVALID,
        `${path}.export: "${entry.module}" has no ${exportName === 'default' ? 'default export' : `export "${exportName}"`} that is a plugin factory` +
          (functions.length > 0 ? `; name one of its functions in "export": ${functions.slice(0, 10).join(', ')}` : ''),
      );
    }
    let plugin: unknown;
    try {
      plugin = (factory as Factory)(entry.options);
    } catch (error) {
      throw configError(GatewayErrorCode.CONFIG_INVALID, optionsMessage(error, `${path}.options`), error);
    }
    if (!isPlugin(plugin)) {
      throw configError(
        GatewayErrorCode.CONFIG_INVALID,
        `${path}.export: the factory of "${entry.module}" returned no plugin (an object with a name, a version and apply())`,
      );
    }
    loaded.push({ plugin, module: entry.module, path });
  }
  return loaded;
}

async function importModule(module: string, baseDir: string, path: string): Promise<Record<string, unknown>> {
  const isPath = module.startsWith('.') || isAbsolute(module);
  const file = resolve(baseDir, module);
  const specifier = isPath ? pathToFileURL(file).href : module;
  try {
    return (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const reason = notFound ? notFoundReason(module, isPath ? file : undefined, messageOf(error)) : messageOf(error);
    throw configError(GatewayErrorCode.CONFIG_INVALID, `${path}.module: cannot load "${module}": ${reason}`, error);
  }
}

/**
 * Which module was missing: the plugin itself, or one it imports. Node says
 * `Cannot find package 'x' imported from /path/file`; when the plugin is
 * there, the fix is to make its import resolvable from its own folder.
 */
function notFoundReason(module: string, file: string | undefined, message: string): string {
  if (file !== undefined && !existsSync(file)) return `no module at ${file}`;
  const missing = /Cannot find (?:package|module) '([^']{1,300})' imported from (.{1,500})$/m.exec(message);
  const [, name, from] = missing ?? [];
  if (name === undefined || from === undefined || name === module) {
    return file === undefined ? `the package "${module}" is not installed where the gateway runs` : message;
  }
  const packageName = name.startsWith('.') || isAbsolute(name) ? undefined : packageOf(name);
  return (
    `it imports "${name}", which cannot be resolved from ${from.trim()}` +
    (packageName === undefined
      ? ''
      : `; install it where the plugin is (\`npm install ${packageName}\` in the plugin's folder, ` +
        `or a node_modules in a folder above it), install the plugin as a package (\`npm install -g\` beside ` +
        `a global gateway), or bundle the plugin with its dependencies`)
  );
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/**
 * A factory's error with each bad option named by its place in the config:
 * `parseOptions()` says `Invalid options for plugin "x": a.b: reason; c: reason`.
 */
function optionsMessage(error: unknown, at: string): string {
  const message = messageOf(error);
  const parsed = /^Invalid options for plugin "[^"]*": (.*)$/s.exec(message);
  if (!parsed?.[1]) return `${at}: ${message}`;
  return parsed[1]
    .split('; ')
    .map((issue) => {
      const colon = issue.indexOf(': ');
      const field = colon < 0 ? '(options)' : issue.slice(0, colon);
      const reason = colon < 0 ? issue : issue.slice(colon + 2);
      return `${field === '(options)' ? at : `${at}.${field}`}: ${reason}`;
    })
    .join('; ');
}

function isPlugin(value: unknown): value is Plugin {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Plugin>;
  return typeof candidate.name === 'string' && typeof candidate.apply === 'function';
}
