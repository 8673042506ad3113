import type { DependencyContainer } from 'tsyringe';

// The CommonJS build's form of `#root-container` (its `require` condition): a
// literal `require` inside the function, which Node runs on the first call
// and which every bundler follows into the bundle, still deferred. Only the
// CommonJS build uses it; the sources and the ESM build never import it.

let root: DependencyContainer | undefined;

/** tsyringe's root container, loaded on the first call. */
export function rootContainer(): DependencyContainer {
  if (root !== undefined) return root;
  // reflect-metadata first: tsyringe checks for the polyfill as it loads.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS build only: bundlers follow a literal require
  require('reflect-metadata');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
  root = (require('tsyringe') as typeof import('tsyringe')).container;
  return root;
}
