// The form of `#root-container` that bundlers take (the `module` condition,
// which esbuild, webpack and rollup's node-resolve apply and Node never does):
// static imports, so that a single file carries tsyringe and the polyfill and
// runs with no node_modules beside it. Evaluating them inside a bundle costs
// about a millisecond; under Node, loading them from node_modules costs tens
// (root-container.ts).
// reflect-metadata first: tsyringe checks for the polyfill as it loads.
import 'reflect-metadata';
import { container } from 'tsyringe';
import type { DependencyContainer } from 'tsyringe';

/** tsyringe's root container. */
export function rootContainer(): DependencyContainer {
  return container;
}
