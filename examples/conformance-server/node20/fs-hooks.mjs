// Module resolve hook (runs on the loader thread): only the conformance CLI's own
// imports of 'fs' are redirected, so everything else keeps the real module.
const shim = new URL('./fs-with-glob.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const fromSuite = context.parentURL?.includes('/@modelcontextprotocol/conformance/') ?? false;
  if (fromSuite && (specifier === 'fs' || specifier === 'node:fs')) return { url: shim, shortCircuit: true };
  return nextResolve(specifier, context);
}
