import type { DependencyContainer } from 'tsyringe';
import { requireCjs } from './require-cjs.js';

// Under Node, tsyringe (61 CommonJS modules with tslib) and the reflect-metadata
// polyfill load with the first server container a program asks for, not with
// core: an adopted server serves its plugins their logger, clock and store
// without one. Node's own require finds the copy the program's own
// `import 'tsyringe'` finds (tsyringe has no `exports`, so import and require
// load the same file), so classes the program marks `@injectable()` resolve in
// a server's container. A bundler takes the `module` form of `#root-container`
// instead (root-container-bundled.ts), which carries tsyringe into the bundle;
// the CommonJS build takes root-container-require.ts.

let root: DependencyContainer | undefined;

/** tsyringe's root container, loaded on the first call. */
export function rootContainer(): DependencyContainer {
  if (root !== undefined) return root;
  // reflect-metadata first: tsyringe checks for the polyfill as it loads.
  requireCjs('reflect-metadata');
  root = (requireCjs('tsyringe') as typeof import('tsyringe')).container;
  return root;
}
