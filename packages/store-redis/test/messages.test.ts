import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../src/messages.js';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory } from './helpers/stores.js';

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();
let stores: StoreFactory | undefined;

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await stores?.closeAll();
});

/** The next message a subscription hears. */
function nextOf(): { hear: (message: string) => void; next: Promise<string> } {
  let hear: (message: string) => void = () => {};
  const next = new Promise<string>((resolve) => (hear = resolve));
  return { hear, next };
}

describe('messages between replicas', () => {
  it('delivers what one store publishes to a subscriber on another, with its text intact', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const heard = nextOf();
    await b.messages.subscribe('sessions', heard.hear);
    await a.messages.publish('sessions', '{"to":"b","body":"ünïcode ✓"}');
    expect(await heard.next).toBe('{"to":"b","body":"ünïcode ✓"}');
  });

  it('stops delivering after unsubscribe, and keeps other subscribers of the channel', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const dropped: string[] = [];
    const kept = nextOf();
    const unsubscribe = await b.messages.subscribe('c', (m) => dropped.push(m));
    await b.messages.subscribe('c', kept.hear);
    unsubscribe();
    await a.messages.publish('c', 'after');
    expect(await kept.next).toBe('after');
    expect(dropped).toEqual([]);
  });

  it('keeps channels of two key prefixes apart', async () => {
    stores = new StoreFactory(redis);
    const other = new StoreFactory(redis);
    try {
      const a = stores.open().store;
      const b = other.open().store;
      const foreign: string[] = [];
      const own = nextOf();
      await b.messages.subscribe('c', (m) => foreign.push(m));
      await a.messages.subscribe('c', own.hear);
      await a.messages.publish('c', 'mine');
      expect(await own.next).toBe('mine');
      expect(foreign).toEqual([]);
    } finally {
      await other.closeAll();
    }
  });

  it('refuses a message larger than the bound before sending it', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    await expect(a.messages.publish('c', 'x'.repeat(MAX_MESSAGE_BYTES + 1))).rejects.toThrow(/limited to/);
  });
});
