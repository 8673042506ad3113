// Paused scripts are shared fairly: one caller that keeps pausing scripts holds at most its share of the journals
// (count and bytes), the server at most its total, over every replica sharing the store; a resumed journal gives its
// share back at once, a lapsed one soon after. Real servers over loopback HTTP with API keys, real 2026-07-28
// clients that answer by hand.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MemoryStore, createServer } from '@sluice/core';
import type { CallToolResult, SluiceServer, Store } from '@sluice/core';
import { FakeClock, captureLogger, errorOf, textOf } from '@sluice/testing';
import '@sluice/http';
import { CodeModeErrorCode, CodeModeEvent, codeMode } from '@sluice/plugin-code-mode';
import type { CodeModeOptions } from '@sluice/plugin-code-mode';
import { authInfoFor } from '@sluice/core/internal';
import { callerDigest } from '../src/journal.js';
import { PausedShares, SLICES_PER_TTL } from '../src/paused-shares.js';
import type { PauseRefusal, PausedSlot } from '../src/paused-shares.js';
import { registerPauseTools, resultOf } from './helpers.js';

const KEYS = {
  alice: 'alice-key-0123456789abcdef0123456789',
  bob: 'bob-key-0123456789abcdef0123456789ab',
  carol: 'carol-key-0123456789abcdef0123456789',
} as const;
type Who = keyof typeof KEYS;

const SECRET = 'a replica-wide secret of at least thirty-two bytes';

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

interface Answer extends CallToolResult {
  resultType?: string;
  requestState: string;
}

/** One server (a replica when `shared` names the store and clock of others) with code mode, three API keys. */
async function replica(options: CodeModeOptions = {}, shared?: { store: Store; clock: FakeClock }) {
  const logs = captureLogger();
  const clock = shared?.clock ?? new FakeClock(Date.now());
  const writes: string[] = [];
  const server: SluiceServer = createServer({
    name: 'pausing',
    version: '1.0.0',
    logger: logs.logger,
    clock,
    ...(shared === undefined ? {} : { store: shared.store }),
    plugins: [codeMode({ ...options, journal: { secret: SECRET, ...options.journal } })],
  });
  registerPauseTools(server, writes);
  const listener = await server.listen({
    auth: { type: 'apiKeys', keys: Object.entries(KEYS).map(([name, key]) => ({ name, key })) },
  });
  open.push(server);
  const clients = new Map<Who, Client>();
  const send = async (who: Who, params: Record<string, unknown>): Promise<Answer> => {
    let client = clients.get(who);
    if (client === undefined) {
      client = new Client(
        { name: who, version: '1.0.0' },
        {
          versionNegotiation: { mode: { pin: '2026-07-28' } },
          capabilities: { elicitation: { form: {} } },
          inputRequired: { autoFulfill: false },
        },
      );
      await client.connect(
        new StreamableHTTPClientTransport(listener.url, {
          requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } },
        }),
      );
      open.push(client);
      clients.set(who, client);
    }
    return (await client.callTool(params as never, { allowInputRequired: true })) as Answer;
  };
  return {
    writes,
    logs,
    clock,
    run: (who: Who, code: string) => send(who, { name: 'execute_code', arguments: { code } }),
    resume: (who: Who, code: string, requestState: string) =>
      send(who, {
        name: 'execute_code',
        arguments: { code },
        inputResponses: { who: { action: 'accept', content: { name: who } } },
        requestState,
      }),
    refusals: () => logs.records.filter((r) => r.event === CodeModeEvent.JOURNALS_FULL),
  };
}

const SCRIPT = "const wrote = await local.write({ line: 'once' }); return { wrote, hello: await local.ask() };";
/** A script whose journal holds a 4 KiB reply. */
const REPORT = 'const r = await local.report(); return { length: r.length, hello: await local.ask() };';

const paused = (answer: Answer): string => {
  expect(answer.resultType, JSON.stringify(answer)).toBe('input_required');
  return answer.requestState;
};

/** The refusal of a pause: its code and what it says about the full share. */
function full(answer: Answer) {
  expect(answer.resultType).not.toBe('input_required');
  const error = errorOf(answer);
  expect(error?.code, textOf(answer)).toBe(CodeModeErrorCode.JOURNALS_FULL);
  return { share: error?.share, limit: error?.limit, max: error?.max, retryAfterMs: error?.retryAfterMs };
}

describe('paused scripts per caller', () => {
  it('past its share (16 by default) a caller cannot pause another script; another caller still pauses and resumes', async () => {
    const k = await replica();
    for (let i = 0; i < 16; i++) paused(await k.run('alice', SCRIPT));
    const refused = await k.run('alice', SCRIPT);
    expect(full(refused)).toMatchObject({ share: 'caller', limit: 'scripts', max: 16 });
    expect(textOf(refused)).toMatch(/already hold 16 paused scripts, as many as one caller may \(16\)/);
    expect(k.refusals()).toEqual([expect.objectContaining({ share: 'caller', limit: 'scripts', max: 16, held: 16 })]);
    // The refused script ran up to its pause (its write happened), and left nothing to resume.
    expect(k.writes).toHaveLength(17);
    // Only pausing is refused: a script that does not pause still runs.
    expect(resultOf(await k.run('alice', 'return 1;'))).toBe(1);

    const state = paused(await k.run('bob', SCRIPT));
    expect(resultOf(await k.resume('bob', SCRIPT, state))).toEqual({ wrote: 'wrote 18', hello: 'hello bob' });
  });

  it('a resumed script gives its share back, whatever its end; a lapsed journal stops counting a slice after', async () => {
    const ttlMs = 60_000;
    const k = await replica({ journal: { ttlMs, maxPausedPerCaller: 2 } });
    const first = paused(await k.run('alice', SCRIPT));
    const second = paused(await k.run('alice', SCRIPT));
    expect(full(await k.run('alice', SCRIPT))).toMatchObject({ share: 'caller', limit: 'scripts', max: 2 });

    // Resumed and finished: its share is free again.
    expect(resultOf(await k.resume('alice', SCRIPT, first))).toMatchObject({ hello: 'hello alice' });
    const third = paused(await k.run('alice', SCRIPT));
    expect(full(await k.run('alice', SCRIPT)).share).toBe('caller');

    // A retry that is refused before the journal is taken (another script's source) leaves it, and its count.
    expect(errorOf(await k.resume('alice', `${SCRIPT} // other`, third))?.code).toBe(CodeModeErrorCode.JOURNAL_INVALID);
    expect(full(await k.run('alice', SCRIPT)).share).toBe('caller');
    expect(resultOf(await k.resume('alice', SCRIPT, second))).toMatchObject({ hello: 'hello alice' });

    // Resumed and stopped (its calls left the journal): taken out of the store, so counted out too.
    const code = 'await local.write({ line: String(Math.random()) }); return await local.ask();';
    const mismatched = paused(await k.run('alice', code));
    expect(full(await k.run('alice', SCRIPT)).share).toBe('caller');
    expect(errorOf(await k.resume('alice', code, mismatched))?.code).toBe(CodeModeErrorCode.JOURNAL_MISMATCH);
    const last = paused(await k.run('alice', SCRIPT));
    const refused = full(await k.run('alice', SCRIPT));
    // Until the oldest journal counted lapses and its slice leaves the window: at most ttlMs and one slice.
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(ttlMs + ttlMs / SLICES_PER_TTL);

    // Never resumed: the journals lapse, and a slice later no longer count.
    k.clock.advance(ttlMs + ttlMs / SLICES_PER_TTL);
    expect(errorOf(await k.resume('alice', SCRIPT, last))?.code).toBe(CodeModeErrorCode.JOURNAL_EXPIRED);
    paused(await k.run('alice', SCRIPT));
    paused(await k.run('alice', SCRIPT));
    expect(full(await k.run('alice', SCRIPT)).share).toBe('caller');
  });

  it("bounds a caller's journal bytes too (journal.maxBytesPerCaller)", async () => {
    const k = await replica({ journal: { maxBytesPerCaller: 10_000 } });
    paused(await k.run('alice', REPORT));
    paused(await k.run('alice', REPORT));
    const refused = await k.run('alice', REPORT);
    expect(full(refused)).toMatchObject({ share: 'caller', limit: 'bytes', max: 10_000 });
    expect(textOf(refused)).toMatch(
      /journals hold \d+ bytes, and this one's \d+ more would pass what one caller may keep/,
    );
    paused(await k.run('bob', REPORT));
  });

  it('counts a journal as the store keeps it, its JSON written again as a string', async () => {
    // Attack: replies full of characters JSON escapes (a quote is two bytes in the journal's JSON, four once the
    // store writes that text as a string): the shares counted half of what Redis held.
    const k = await replica({ journal: { maxBytesPerCaller: 10_000 } });
    const QUOTES = 'const r = await local.quotes(); return { length: r.length, hello: await local.ask() };';
    expect(full(await k.run('alice', QUOTES))).toMatchObject({ share: 'caller', limit: 'bytes', max: 10_000 });
    paused(await k.run('alice', REPORT));
  });

  it('says so when one journal alone is larger than a caller may keep, with no time to retry after', async () => {
    const k = await replica({ journal: { maxBytesPerCaller: 2_048 } });
    const refused = full(await k.run('alice', REPORT));
    expect(refused).toMatchObject({ share: 'caller', limit: 'bytes', max: 2_048 });
    expect(refused.retryAfterMs).toBeUndefined();
  });
});

describe('paused scripts on the server', () => {
  it('keeps at most journal.maxPausedScripts, each caller within its share; a resume makes room', async () => {
    const k = await replica({ journal: { maxPausedScripts: 3, maxPausedPerCaller: 2 } });
    const alices = [paused(await k.run('alice', SCRIPT)), paused(await k.run('alice', SCRIPT))];
    expect(full(await k.run('alice', SCRIPT)).share).toBe('caller');
    paused(await k.run('bob', SCRIPT));
    expect(full(await k.run('bob', SCRIPT))).toMatchObject({ share: 'server', limit: 'scripts', max: 3 });
    expect(full(await k.run('carol', SCRIPT))).toMatchObject({ share: 'server', limit: 'scripts', max: 3 });
    expect(k.refusals().map((r) => r.share)).toEqual(['caller', 'server', 'server']);

    expect(resultOf(await k.resume('alice', SCRIPT, alices[0]!))).toMatchObject({ hello: 'hello alice' });
    const carols = paused(await k.run('carol', SCRIPT));
    expect(resultOf(await k.resume('carol', SCRIPT, carols))).toMatchObject({ hello: 'hello carol' });
  });

  it('keeps at most journal.maxTotalBytes of journals', async () => {
    const k = await replica({ journal: { maxTotalBytes: 10_000 } });
    paused(await k.run('alice', REPORT));
    paused(await k.run('bob', REPORT));
    expect(full(await k.run('carol', REPORT))).toMatchObject({ share: 'server', limit: 'bytes', max: 10_000 });
    // A smaller journal still fits.
    paused(await k.run('carol', SCRIPT));
  });

  it('counts over every replica sharing the store; a journal resumed on another replica is counted out there', async () => {
    const clock = new FakeClock(Date.now());
    const shared = { store: new MemoryStore(clock), clock };
    const options = { journal: { maxPausedPerCaller: 2 } };
    const a = await replica(options, shared);
    const b = await replica(options, shared);
    const onA = paused(await a.run('alice', SCRIPT));
    paused(await b.run('alice', SCRIPT));
    expect(full(await a.run('alice', SCRIPT)).share).toBe('caller');
    expect(full(await b.run('alice', SCRIPT)).share).toBe('caller');
    expect(resultOf(await b.resume('alice', SCRIPT, onA))).toMatchObject({ hello: 'hello alice' });
    paused(await a.run('alice', SCRIPT));
    expect(full(await b.run('alice', SCRIPT)).share).toBe('caller');
  });
});

describe("the shares' counters", () => {
  const limits = {
    maxPausedScripts: 1_000,
    maxPausedPerCaller: 3,
    maxTotalBytes: 1 << 30,
    maxBytesPerCaller: 1 << 30,
  };

  it('never let concurrent pauses of one caller past its share, and count refused ones out', async () => {
    const clock = new FakeClock(1_000_000);
    const store = new MemoryStore(clock);
    const refusals = { caller: 0, server: 0 };
    const shares = new PausedShares(store, () => clock.now(), 60_000, limits, refusals);
    const answers = await Promise.all(Array.from({ length: 20 }, () => shares.admit('a', 100)));
    const slots = answers.filter((answer): answer is PausedSlot => !('share' in answer));
    expect(slots).toHaveLength(3);
    expect(refusals).toEqual({ caller: 17, server: 0 });
    await shares.release('a', slots[0]!, 100);
    expect('share' in (await shares.admit('a', 100))).toBe(false);
    expect((await shares.admit('a', 100)) as PauseRefusal).toMatchObject({ share: 'caller', held: 3 });
  });

  it('count a journal from the slice it was kept in until that slice leaves the window', async () => {
    const clock = new FakeClock(1_000_000);
    const store = new MemoryStore(clock);
    const shares = new PausedShares(
      store,
      () => clock.now(),
      60_000,
      { ...limits, maxPausedPerCaller: 1 },
      {
        caller: 0,
        server: 0,
      },
    );
    const slot = (await shares.admit('a', 1)) as PausedSlot;
    const width = 60_000 / SLICES_PER_TTL;
    // Still counted at the last ms of the window (the journal may still be live), not a ms later.
    clock.advance((slot.slice + SLICES_PER_TTL + 1) * width - 1 - clock.now());
    expect('share' in (await shares.admit('a', 1))).toBe(true);
    clock.advance(1);
    expect('share' in (await shares.admit('a', 1))).toBe(false);
    // A release past the window counts nothing out (the slice's count lapsed with it).
    await shares.release('a', slot, 1);
    expect('share' in (await shares.admit('a', 1))).toBe(true);
  });
});

describe('whose share a script takes', () => {
  it('is the verified user, not the OAuth client every user of one app shares', () => {
    const user = (subject: string) =>
      authInfoFor({ method: 'oauth', subject, clientId: 'the-app', scopes: [] }, undefined);
    const ann = callerDigest({ authInfo: user('ann'), mcp: undefined });
    expect(callerDigest({ authInfo: user('bob'), mcp: undefined })).not.toBe(ann);
    expect(callerDigest({ authInfo: user('ann'), mcp: undefined })).toBe(ann);
  });
});
