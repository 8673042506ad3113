// The listener's authentication cost per request, in one process:
// (1) verifying a JWT access token (ES256) against a key set that is already
//     cached, for a client that reuses its token (goal < 50 µs per call), and
//     for a token seen the first time (a full signature check), an API key,
//     and no authentication;
// (2) the same requests end to end is dominated by HTTP (about 1 ms), so the
//     verification step is measured on its own, as the listener runs it.
// Run: pnpm bench auth
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { createAuthGate } from '../packages/http/src/auth/gate.js';
import { isAnswer } from '../packages/http/src/node-front.js';
import { ListenerAuthOptions } from '../packages/http/src/auth/options.js';
import { paired, printTable, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
const jwks = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ keys: [jwk] }));
});
await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
const endpoint = new URL('http://127.0.0.1:3000/mcp');

const token = await new SignJWT({ scope: 'read write', client_id: 'bench' })
  .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
  .setIssuer(issuer)
  .setAudience(endpoint.href)
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(privateKey);

// Distinct tokens, more than the verifier remembers: every one is verified in full.
const fresh = await Promise.all(
  Array.from({ length: 2_500 }, (_, i) =>
    new SignJWT({ scope: 'read', client_id: `bench-${i}` })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
      .setIssuer(issuer)
      .setAudience(endpoint.href)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey)
      .then((t) => `Bearer ${t}`),
  ),
);
let next = 0;

const oauth = createAuthGate(
  ListenerAuthOptions.parse({ type: 'oauth', authorizationServers: [issuer], jwksUri: `${issuer}/jwks` }),
  endpoint,
);
const keys = createAuthGate(
  ListenerAuthOptions.parse({
    type: 'apiKeys',
    keys: [
      { name: 'a', key: 'k'.repeat(32) },
      { name: 'b', key: 'x'.repeat(32) },
    ],
  }),
  endpoint,
);
const none = createAuthGate(ListenerAuthOptions.parse({ type: 'none' }), endpoint);
// The gate reads a request's Authorization header (null when it has none).
const jwtRequest = `Bearer ${token}`;
const keyRequest = `Bearer ${'x'.repeat(32)}`;
const bare = null;

const ok = async (gate: typeof oauth, authorization: string | null) => {
  const verdict = await gate.authenticate(authorization);
  if (isAnswer(verdict)) throw new Error(`refused: ${verdict.status}`);
};
await ok(oauth, jwtRequest); // fetches and caches the key set

const stats = await paired(
  [
    { name: 'none', run: () => ok(none, bare) },
    { name: 'API key (2 keys)', run: () => ok(keys, keyRequest) },
    { name: 'JWT ES256, cached JWKS', run: () => ok(oauth, jwtRequest) },
    { name: 'JWT ES256, first sight', run: () => ok(oauth, fresh[next++ % fresh.length]!) },
  ],
  quick ? { warmup: 200, rounds: 4, perRound: 200 } : { warmup: 2_000, rounds: 10, perRound: 1_000 },
);
printTable(
  'Listener authentication, per request',
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us.toFixed(1), 'p99 µs': s.p99Us.toFixed(1) })),
);
const jwt = stats.find((s) => s.name === 'JWT ES256, cached JWKS')!;
process.stdout.write(
  `JWT verification p50 ${jwt.p50Us.toFixed(1)} µs (goal < 50 µs): ${jwt.p50Us < 50 ? 'met' : 'NOT met'}\n`,
);
writeResult('auth', { stats });
jwks.close();
