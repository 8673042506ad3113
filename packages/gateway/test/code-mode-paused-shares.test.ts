// Paused code-mode scripts are shared fairly over a fleet: the review's attack (one key pausing script after script,
// each keeping a 240 KB journal) stops at the key's share, on every replica sharing the Redis store, while another key
// still pauses and resumes. Two real gateways on one Redis, the fixture upstream, real 2026-07-28 SDK clients.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { fixtureUpstream, roundTripClient } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

const run = promisify(execFile);

const ATTACKER = 'attacker-key-0123456789abcdef';
const VICTIM = 'victim-key-0123456789abcdef';
const SECRET = 'a replica-wide secret of at least thirty-two bytes';
const ACCEPT = { action: 'accept', content: { approve: true } };

let redis: RedisProcess;
const open: { close(): Promise<unknown> }[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
  await run('redis-cli', ['-u', redis.url, 'FLUSHALL']);
});

/** A replica as the review ran it (code mode with its defaults, `up_sleep` needing approval), on the shared Redis. */
async function replica(): Promise<URL> {
  return (await replicaGateway()).url;
}

/** A replica and its gateway, whose metrics a test reads. */
async function replicaGateway(): Promise<{ url: URL; gateway: Gateway }> {
  const created: Gateway = createGateway(
    {
      roundStateSecret: SECRET,
      listen: {
        http: {
          port: 0,
          auth: {
            type: 'apiKeys',
            keys: [
              { name: 'attacker', key: ATTACKER },
              { name: 'victim', key: VICTIM },
            ],
          },
        },
      },
      store: { redis: redis.url },
      upstreams: [fixtureUpstream('up')],
      plugins: {
        risk: {
          ledger: { persist: 'memory' },
          tools: [{ match: 'up_sleep', hitl: true }],
          approval: { secret: SECRET },
        },
        codeMode: {},
      },
    },
    { logger: captureLogger().logger },
  );
  open.push(created);
  const { http } = await created.start();
  return { url: http!.url, gateway: created };
}

async function client(url: URL, key: string) {
  const connected = await roundTripClient(url, { authorization: `Bearer ${key}` });
  open.push(connected);
  return connected;
}

/** The review's script: two 120 KB replies kept in the journal, then a call that needs approval. */
const attack = (n: number) =>
  `const a = await up.echo({ text: 'A'.repeat(120000) }); const b = await up.echo({ text: 'B'.repeat(120000) }); await up.sleep({ ms: 1 }); return ${n};`;

/** What an answer says, for a failed expectation (an input-required answer has no content). */
const said = (answer: unknown): string => JSON.stringify(answer).slice(0, 500);

/** The journals code mode keeps in Redis. */
async function journalKeys(): Promise<string[]> {
  const { stdout } = await run('redis-cli', ['-u', redis.url, '--scan', '--pattern', '*code-mode/journal/*']);
  return stdout.split('\n').filter((line) => line.length > 0);
}

describe("one key's paused scripts over a fleet", () => {
  it('stop at its share (16) on every replica; another key still pauses and resumes, and a resume makes room', async () => {
    const firstReplica = await replicaGateway();
    const first = firstReplica.url;
    const second = await replica();
    const attackers = [await client(first, ATTACKER), await client(second, ATTACKER)];
    const states: { code: string; state: string }[] = [];
    for (let n = 0; n < 16; n++) {
      const code = attack(n);
      const answer = await attackers[n % 2]!.first('execute_code', { code });
      expect(answer.resultType, said(answer)).toBe('input_required');
      states.push({ code, state: answer.requestState });
    }
    expect(await journalKeys()).toHaveLength(16);

    // The 17th pause is refused on either replica, and keeps nothing.
    for (const attacker of attackers) {
      const refused = (await attacker.first('execute_code', { code: attack(99) })) as unknown as CallToolResult;
      expect(errorOf(refused)?.code, said(refused)).toBe('JOURNALS_FULL');
      expect(errorOf(refused)).toMatchObject({ share: 'caller', limit: 'scripts', max: 16 });
    }
    expect(await journalKeys()).toHaveLength(16);
    // Counted in /metrics, where each replica counts its own refusals.
    expect(firstReplica.gateway.metrics?.render()).toContain('sluice_code_mode_pause_refusals_total{share="caller"} 1');

    // Another key pauses on one replica and resumes on the other.
    const victimCode = attack(1_000);
    const question = await (await client(second, VICTIM)).first('execute_code', { code: victimCode });
    expect(question.resultType).toBe('input_required');
    const resumed = await (
      await client(first, VICTIM)
    ).retry('execute_code', { code: victimCode }, question.requestState, ACCEPT);
    expect(resumed.isError, textOf(resumed)).toBeFalsy();
    expect((resumed.structuredContent as { result: unknown }).result).toBe(1_000);

    // The attacker resumes one script on the other replica than it paused on: its share has room for one more.
    const { code, state } = states[0]!;
    const done = await attackers[1]!.retry('execute_code', { code }, state, ACCEPT);
    expect(done.isError, textOf(done)).toBeFalsy();
    expect((await attackers[0]!.first('execute_code', { code: attack(17) })).resultType).toBe('input_required');
    const again = (await attackers[1]!.first('execute_code', { code: attack(18) })) as unknown as CallToolResult;
    expect(errorOf(again)?.code, said(again)).toBe('JOURNALS_FULL');
    expect(await journalKeys()).toHaveLength(16);
  });
});
