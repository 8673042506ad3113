// Preload for running the conformance CLI on Node 20: `node --import ./node20/register.mjs <cli>`.
// The CLI imports `globSync` from 'fs', which Node added in 22. A named ESM import
// of a builtin cannot be added by patching the module object (the export names
// of a builtin are fixed), so a resolve hook points the CLI's 'fs' imports at a
// module that re-exports node:fs and adds globSync. Nothing in node_modules changes.
import { register } from 'node:module';

register('./fs-hooks.mjs', import.meta.url);
