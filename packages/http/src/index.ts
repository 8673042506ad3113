// The public API of @sluice/http, listed by name: anything exported here is public.
// Importing this package gives every Sluice server `listen()`.

import { provideHttpServing } from '@sluice/core/internal';
import { listenHttp } from './http.js';

provideHttpServing({ listen: listenHttp });

export { HttpLimits } from './http-limits.js';
export { ListenerAuthOptions } from './auth/options.js';
export type { GuessLimits } from './auth/guess-throttle.js';
export { guessableKeyWarning, guessableKeys } from './auth/api-keys.js';
export type { GuessUsage, HttpListener, ListenOptions, RouteRequest } from './http.js';
export type { ShareLimits, ShareUsage } from './http-shares.js';
export { VERSION } from './version.js';
