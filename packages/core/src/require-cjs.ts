import { createRequire } from 'node:module';

// tapable and pino are CommonJS and require Node built-ins ("util", "os")
// inside. An ESM bundle (esbuild) turns those into dynamic requires that throw
// at start-up. Loading them with Node's own require from this file keeps them,
// and what they require, outside any bundle: Node resolves them from
// node_modules at run time. In the CommonJS build `import.meta.url` is empty
// and `__filename` names this file.
const here: string = typeof __filename === 'string' ? __filename : import.meta.url;

/** Node's require, resolving from @sluice/core: the one way core loads its CommonJS dependencies. */
export const requireCjs: NodeJS.Require = createRequire(here);
