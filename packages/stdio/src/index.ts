// The public API of @sluice/stdio, listed by name: anything exported here is public.
// Importing this package gives every Sluice server `serveStdio()`.

import { provideStdioServing } from '@sluice/core/internal';
import { serveOverStdio } from './stdio.js';

provideStdioServing({ serve: serveOverStdio });

export type { StdioHandle, StdioOptions } from '@sluice/core';
export { VERSION } from './version.js';
