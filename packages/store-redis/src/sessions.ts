import type { SessionIndex, SessionIndexLimits } from '@sluice/core';
import type { Backend } from './backend.js';
import type { KeySpace } from './keys.js';
import { Script } from './scripts.js';

/**
 * KEYS: used (sorted set: id -> last use, Redis time in ms), unfinished (sorted
 * set: id -> opened, while the handshake has not finished), bytes (hash: id ->
 * estimated bytes), memory (the sum of bytes).
 */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function drop(id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  local bytes = tonumber(redis.call('HGET', KEYS[3], id) or '0') or 0
  if redis.call('HDEL', KEYS[3], id) == 1 then redis.call('DECRBY', KEYS[4], bytes) end
end
`;

/**
 * ARGV: id, bytes, maxSessions, maxMemoryBytes, idleMs, handshakeMs.
 * Returns {admitted (0/1), evicted id...}. Expired sessions leave first (a
 * bounded number per call), then unfinished handshakes oldest first, then
 * the least recently used, until one more session fits.
 */
const ADMIT = `${PRELUDE}
local id, bytes, max, max_memory = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[5]), 'LIMIT', 0, 1000)) do drop(gone) end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[6]), 'LIMIT', 0, 1000)) do drop(gone) end
drop(id)
if bytes > max_memory then return {0} end
local evicted = {0}
while redis.call('ZCARD', KEYS[1]) >= max or (tonumber(redis.call('GET', KEYS[4]) or '0') or 0) + bytes > max_memory do
  local victim = redis.call('ZRANGE', KEYS[2], 0, 0)[1] or redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if victim == nil then
    -- Nothing left to count: the sum starts again from zero.
    redis.call('SET', KEYS[4], 0)
    break
  end
  drop(victim)
  evicted[#evicted + 1] = victim
end
redis.call('ZADD', KEYS[1], now, id)
redis.call('ZADD', KEYS[2], now, id)
redis.call('HSET', KEYS[3], id, bytes)
redis.call('INCRBY', KEYS[4], bytes)
evicted[1] = 1
return evicted
`;

/** ARGV: id, ready (0/1). Returns 1 if the index holds the session (now touched), else 0. */
const TOUCH = `${PRELUDE}
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
if ARGV[2] == '1' then redis.call('ZREM', KEYS[2], ARGV[1]) end
return 1
`;

/** ARGV: id. */
const REMOVE = `${PRELUDE}
drop(ARGV[1])
return 1
`;

const Admit = new Script('sessions-admit', ADMIT);
const Touch = new Script('sessions-touch', TOUCH);
const Remove = new Script('sessions-remove', REMOVE);

/**
 * The fleet's 2025-11-25 sessions counted in Redis, each change made by one
 * script, so that the session bounds hold over every replica. While Redis is
 * lost, the calls fail and the listener falls back on its own bounds.
 */
export class RedisSessions implements SessionIndex {
  private readonly keys: readonly [string, string, string, string];

  constructor(
    private readonly backend: Backend,
    keys: KeySpace,
  ) {
    const { used, unfinished, bytes, memory } = keys.sessions();
    this.keys = [used, unfinished, bytes, memory];
  }

  async admit(
    id: string,
    bytes: number,
    limits: SessionIndexLimits,
  ): Promise<{ admitted: boolean; evicted: string[] }> {
    const args = [id, Math.ceil(bytes), limits.maxSessions, limits.maxMemoryBytes, limits.idleMs, limits.handshakeMs];
    const [admitted, ...evicted] = (await this.backend.run(Admit, this.keys, args)) as [number, ...string[]];
    return { admitted: admitted === 1, evicted };
  }

  async touch(id: string, ready: boolean): Promise<boolean> {
    return (await this.backend.run(Touch, this.keys, [id, ready ? 1 : 0])) === 1;
  }

  async remove(id: string): Promise<void> {
    await this.backend.run(Remove, this.keys, [id]);
  }
}
