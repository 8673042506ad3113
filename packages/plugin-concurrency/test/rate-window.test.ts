// The rate's fixed window: timed by the store where it can be (so replicas whose clocks disagree count one window),
// numbered by the process's clock where it cannot, and keyed by its length either way (so a rate given a new
// `perMs` against the same store, as after a restart with a changed config, never counts in a window of the old).
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import type { Store } from '@sluice/core';
import { createTestKit, errorOf } from '@sluice/testing';
import { concurrency } from '@sluice/plugin-concurrency';

interface Rate {
  readonly calls: number;
  readonly perMs: number;
}

/** `count` calls of a tool limited to `rate`, on a fresh server against `store`: `ran`, or the refusal's code. */
async function callsOf(store: Store, rate: Rate, count: number): Promise<string[]> {
  const kit = await createTestKit({
    plugins: [concurrency()],
    store,
    tools: [
      {
        name: 'metered',
        policy: { concurrency: { maxActive: 10, rate } },
        handler: () => ({ content: [{ type: 'text' as const, text: 'ok' }] }),
      },
    ],
  });
  try {
    const outcomes: string[] = [];
    for (let i = 0; i < count; i++) outcomes.push(errorOf(await kit.call('metered'))?.code ?? 'ran');
    return outcomes;
  } finally {
    await kit.close();
  }
}

/** A memory store that cannot time windows, as a store of another author's may not. */
function untimedStore(): Store {
  const store = new MemoryStore();
  (store as { incrementWindow?: unknown }).incrementWindow = undefined;
  return store;
}

describe('a rate window', () => {
  it.each([
    ['a store that times windows', () => new MemoryStore()],
    ['a store that cannot', untimedStore],
  ])('on %s, counts a new perMs afresh: a restart with another rate is not held to the old window', async (_, made) => {
    const store = made();
    expect(await callsOf(store, { calls: 3, perMs: 86_400_000 }, 4)).toEqual(['ran', 'ran', 'ran', 'RATE_LIMITED']);
    // Windows of hours: a test this quick never straddles the edge of one numbered from the epoch.
    expect(await callsOf(store, { calls: 5, perMs: 3_600_000 }, 6)).toEqual([
      'ran',
      'ran',
      'ran',
      'ran',
      'ran',
      'RATE_LIMITED',
    ]);
    // Back to the first rate: its window still runs.
    expect(await callsOf(store, { calls: 3, perMs: 86_400_000 }, 1)).toEqual(['RATE_LIMITED']);
  });

  it('tells a refused caller when its window ends, on a store that cannot time windows too', async () => {
    const kit = await createTestKit({
      plugins: [concurrency()],
      store: untimedStore(),
      tools: [
        {
          name: 'metered',
          policy: { concurrency: { maxActive: 10, rate: { calls: 1, perMs: 3_600_000 } } },
          handler: () => ({ content: [{ type: 'text' as const, text: 'ok' }] }),
        },
      ],
    });
    try {
      expect((await kit.call('metered')).isError).toBeFalsy();
      const refused = errorOf(await kit.call('metered'));
      expect(refused?.code).toBe('RATE_LIMITED');
      expect(refused?.retryAfterMs).toBeGreaterThan(0);
      expect(refused?.retryAfterMs).toBeLessThanOrEqual(3_600_000);
    } finally {
      await kit.close();
    }
  });
});
