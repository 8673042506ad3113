import nodeModule from 'node:module';

// tapable and pino are CommonJS and require Node built-ins ("util", "os")
// inside. An ESM bundle (esbuild) turns those into dynamic requires that throw
// at start-up. Loading them with Node's own require from this file keeps them,
// and what they require, outside any bundle: Node resolves them from
// node_modules at run time. In the CommonJS build `import.meta.url` is empty
// and `__filename` names this file; the ESM build reads `import.meta.url`
// first, because where it is imported from `node -e` a global `__filename`
// ("[eval]") names no file. `createRequire` is called on the module object,
// not imported by name: webpack replaces a named `createRequire(x)` whose
// argument it cannot read at build time with `undefined`.
const url = (import.meta as { url?: string }).url;
const here: string = typeof url === 'string' && url !== '' ? url : __filename;

/** True in core's CommonJS build, where `import.meta` is empty. */
export const COMMONJS_BUILD = here !== url;

/** Node's require, resolving from @sluice/core: the one way core loads its CommonJS dependencies. */
export const requireCjs: NodeJS.Require = nodeModule.createRequire(here);
