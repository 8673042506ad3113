import { createRequire } from 'node:module';

// Read from package.json (one level up from both src/ and dist/), so a release bump is never missed here.
const manifest = createRequire(import.meta.url)('../package.json') as { version: string };

/** The version of @sluice/gateway. */
export const version: string = manifest.version;
