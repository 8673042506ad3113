// Property tests over attacker-controlled `_meta`: nothing crashes, a malformed stack is a
// -32602, a well-formed one is refused or extended exactly as specified.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MetaKey, SluiceError } from '@sluice/core';
import type { CallToolResult, HttpListener } from '@sluice/core';
import type { TestKit } from '@sluice/testing';
import { createTestKit, errorOf } from '@sluice/testing';
import { LoopGuardErrorCode, MAX_ENTRY_LENGTH, MAX_STACK_ENTRIES, loopGuard } from '@sluice/plugin-loop-guard';
import { hop, readForwarded } from './tools.js';
import '@sluice/http';

const MAX_DEPTH = 16;
const KEYS = [MetaKey.CALL_STACK, 'callStack'] as const;

/** The specification, written independently of the code: what a stack value must look like. */
function wellFormed(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  return (
    Array.isArray(value) &&
    value.length <= MAX_STACK_ENTRIES &&
    Array.from(value as unknown[]).every(
      (entry) => typeof entry === 'string' && entry.length >= 1 && entry.length <= MAX_ENTRY_LENGTH,
    )
  );
}

/** JSON values, with `__proto__` among the keys an object may have. */
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'length', '0', 'callStack', 'x'), tie('value'), {
      maxKeys: 4,
    }),
  ),
})).value;

const entry = fc.oneof(fc.constantFrom('a', 'b', 'svc.run', 'x'), fc.string({ minLength: 1, maxLength: 40 }));
const stackValue = fc.oneof(
  fc.array(entry, { maxLength: 24 }),
  fc.array(fc.constantFrom('b', 'x', 'svc.run'), { minLength: MAX_DEPTH - 2, maxLength: MAX_DEPTH + 2 }),
  fc.array(fc.string({ minLength: 0, maxLength: 300 }), { maxLength: 4 }),
  fc.array(json, { maxLength: 4 }),
  json,
  fc.constantFrom(null, undefined),
);
/** `_meta` with a stack under one key, both keys, or neither, beside arbitrary other keys. */
const metaValue = fc.record(
  { ours: stackValue, plain: stackValue, other: fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 3 }) },
  { requiredKeys: ['other'] },
);

/** Builds a `_meta` through JSON text, so a `__proto__` key is an own key, as it is on the wire. */
function toMeta(m: { ours?: unknown; plain?: unknown; other: Record<string, unknown> }): Record<string, unknown> {
  const parts: Record<string, unknown> = JSON.parse(JSON.stringify(m.other)) as Record<string, unknown>;
  if (m.ours !== undefined) parts[MetaKey.CALL_STACK] = m.ours;
  if (m.plain !== undefined) parts.callStack = m.plain;
  return JSON.parse(JSON.stringify(parts)) as Record<string, unknown>;
}

/** The stack the guard must use: the longer of the two keys. */
function expectedStack(meta: Record<string, unknown>): string[] {
  const ours = (meta[MetaKey.CALL_STACK] ?? []) as string[];
  const plain = (meta.callStack ?? []) as string[];
  return plain.length > ours.length ? plain : ours;
}

type Outcome = { ok: CallToolResult } | { rpc: number | undefined; message: string };

async function outcomeOf(call: Promise<CallToolResult>): Promise<Outcome> {
  try {
    return { ok: await call };
  } catch (error) {
    const e = error as { code?: unknown; rpcCode?: unknown; message?: string };
    const rpc = SluiceError.is(error) ? error.rpcCode : typeof e.code === 'number' ? e.code : undefined;
    return { rpc, message: String(e.message) };
  }
}

/** Checks one outcome against the specification. */
function checkOutcome(meta: Record<string, unknown>, outcome: Outcome): void {
  const valid = KEYS.every((key) => wellFormed(Object.hasOwn(meta, key) ? meta[key] : undefined));
  if (!valid) {
    expect(outcome).toMatchObject({
      rpc: -32602,
      message: expect.stringMatching(/_meta\["(dev\.sluice\/callStack|callStack)"\]/) as unknown,
    });
    return;
  }
  expect(outcome).toHaveProperty('ok');
  const result = (outcome as { ok: CallToolResult }).ok;
  const stack = expectedStack(meta);
  if (stack.includes('a')) {
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      cycle: [...stack.slice(stack.indexOf('a')), 'a'],
    });
  } else if (stack.length >= MAX_DEPTH) {
    expect(errorOf(result)).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP, depth: stack.length });
  } else {
    const seen = readForwarded(result);
    expect(seen.stack).toEqual([...stack, 'a']);
    expect(seen.plain).toEqual([...stack, 'a']);
  }
}

describe('arbitrary _meta over a real client', () => {
  let kit: TestKit;
  beforeAll(async () => {
    kit = await createTestKit({ plugins: [loopGuard({ maxDepth: MAX_DEPTH })], tools: [hop('a'), hop('b')] });
  });
  afterAll(() => kit.close());

  it('never crashes: malformed stacks get -32602, well-formed ones are refused or extended as specified', async () => {
    await fc.assert(
      fc.asyncProperty(metaValue, async (m) => {
        const meta = toMeta(m);
        checkOutcome(meta, await outcomeOf(kit.call('a', {}, meta)));
      }),
      { numRuns: 400 },
    );
    // The server is still serving.
    expect(readForwarded(await kit.call('b')).stack).toEqual(['b']);
  });

  it('bounds the work on huge values: a long array or a long entry is refused by its size', async () => {
    const huge = [
      { callStack: Array.from({ length: 200_000 }, () => 'a') },
      { [MetaKey.CALL_STACK]: ['x'.repeat(2_000_000)] },
      { callStack: [...Array.from({ length: 10 }, () => 'ok'), 'y'.repeat(MAX_ENTRY_LENGTH + 1)] },
    ];
    for (const meta of huge) {
      await expect(kit.call('a', {}, meta)).rejects.toMatchObject({ code: -32602 });
    }
  });

  it('ignores __proto__ at the top of _meta, and inside a stack value rejects the object it makes', async () => {
    const top = JSON.parse('{"__proto__": {"callStack": ["a"]}}') as Record<string, unknown>;
    expect(readForwarded(await kit.call('a', {}, top)).stack).toEqual(['a']);
    const inner = JSON.parse('{"callStack": {"__proto__": ["a"], "length": 1, "0": "a"}}') as Record<string, unknown>;
    await expect(kit.call('a', {}, inner)).rejects.toMatchObject({ code: -32602 });
    expect(({} as Record<string, unknown>).callStack).toBeUndefined();
  });
});

describe('arbitrary values in-process, where nothing is serialized', () => {
  it('never crashes on any value under either key, including sparse arrays and non-JSON values', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ maxDepth: MAX_DEPTH })], tools: [hop('a')] });
    await fc.assert(
      fc.asyncProperty(
        fc.anything({
          withNullPrototype: true,
          withSparseArray: true,
          withBigInt: true,
          withMap: true,
          withSet: true,
          withDate: true,
        }),
        fc.constantFrom(...KEYS),
        async (value, key) => {
          const meta = Object.create(null) as Record<string, unknown>;
          meta[key] = value;
          const outcome = await outcomeOf(kit.server.call('a', {}, { meta }));
          checkOutcome(meta, outcome);
        },
      ),
      { numRuns: 300 },
    );
    await kit.close();
  });
});

describe('arbitrary _meta over loopback HTTP', () => {
  let listener: HttpListener;
  let client: Client;
  let kit: TestKit;
  beforeAll(async () => {
    kit = await createTestKit({ plugins: [loopGuard({ maxDepth: MAX_DEPTH })], tools: [hop('a')] });
    listener = await kit.server.listen();
    client = new Client({ name: 'fuzz', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
  });
  afterAll(async () => {
    await client.close();
    await kit.close();
  });

  it('answers malformed stacks with the JSON-RPC error code -32602 on the wire', async () => {
    await fc.assert(
      fc.asyncProperty(metaValue, async (m) => {
        const meta = toMeta(m);
        const call = client.callTool({ name: 'a', arguments: {}, _meta: meta }) as Promise<CallToolResult>;
        checkOutcome(meta, await outcomeOf(call));
      }),
      { numRuns: 60 },
    );
  });
});
