import { createHash } from 'node:crypto';
import type { SessionIndex, SessionIndexLimits } from '@sluice/core';
import type { Backend } from './backend.js';
import type { KeySpace } from './keys.js';
import { Script } from './scripts.js';

/**
 * KEYS: used (sorted set: id -> last use, Redis time in ms), unfinished (sorted
 * set: id -> opened, while the handshake has not finished), bytes (hash: id ->
 * estimated bytes), memory (the sum of bytes), owners (hash: id -> its
 * caller's tag), caller bytes (hash: caller tag -> the sum of its sessions'
 * bytes). ARGV[1]: the prefix of each caller's sorted set (id -> last use),
 * named by the prefix and the caller's tag: a key the script derives, since no
 * one can name every caller's beforehand, in the index's `{hash tag}` (so in
 * its slot on a Redis Cluster).
 */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local callers = ARGV[1]
local function drop(id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  local bytes = tonumber(redis.call('HGET', KEYS[3], id) or '0') or 0
  if redis.call('HDEL', KEYS[3], id) == 1 then redis.call('DECRBY', KEYS[4], bytes) end
  local caller = redis.call('HGET', KEYS[5], id)
  if not caller then return end
  redis.call('HDEL', KEYS[5], id)
  redis.call('ZREM', callers .. caller, id)
  local left = redis.call('HINCRBY', KEYS[6], caller, -bytes)
  if left <= 0 or redis.call('ZCARD', callers .. caller) == 0 then redis.call('HDEL', KEYS[6], caller) end
end
`;

/**
 * ARGV: (prefix), id, bytes, maxSessions, maxMemoryBytes, idleMs, handshakeMs,
 * caller tag ('' for none), its share of sessions, its share of memory.
 * Returns {admitted (0/1), evicted id...}. Expired sessions leave first (a
 * bounded number per call); then, while the caller would exceed its share,
 * its own least recently used (a caller's only session is never too big for
 * its share); then unfinished handshakes oldest first, then the least
 * recently used, until one more session fits.
 */
const ADMIT = `${PRELUDE}
local id, bytes, max, max_memory = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[6]), 'LIMIT', 0, 1000)) do drop(gone) end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[7]), 'LIMIT', 0, 1000)) do drop(gone) end
drop(id)
if bytes > max_memory then return {0} end
local evicted = {0}
local caller = ARGV[8]
if caller ~= '' then
  local mine, share, share_memory = callers .. caller, tonumber(ARGV[9]), tonumber(ARGV[10])
  while true do
    local held = redis.call('ZCARD', mine)
    local using = tonumber(redis.call('HGET', KEYS[6], caller) or '0') or 0
    if held == 0 or (held < share and using + bytes <= share_memory) then break end
    local victim = redis.call('ZRANGE', mine, 0, 0)[1]
    drop(victim)
    -- Gone from the caller's set even if the owners hash lost it: the loop always ends.
    redis.call('ZREM', mine, victim)
    evicted[#evicted + 1] = victim
  end
end
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
if caller ~= '' then
  redis.call('HSET', KEYS[5], id, caller)
  redis.call('ZADD', callers .. caller, now, id)
  redis.call('HINCRBY', KEYS[6], caller, bytes)
end
evicted[1] = 1
return evicted
`;

/** ARGV: (prefix), id, ready (0/1). Returns 1 if the index holds the session (now touched), else 0. */
const TOUCH = `${PRELUDE}
if redis.call('ZSCORE', KEYS[1], ARGV[2]) == false then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[2])
local caller = redis.call('HGET', KEYS[5], ARGV[2])
if caller then redis.call('ZADD', callers .. caller, 'XX', now, ARGV[2]) end
if ARGV[3] == '1' then redis.call('ZREM', KEYS[2], ARGV[2]) end
return 1
`;

/** ARGV: (prefix), id. */
const REMOVE = `${PRELUDE}
drop(ARGV[2])
return 1
`;

const Admit = new Script('sessions-admit', ADMIT);
const Touch = new Script('sessions-touch', TOUCH);
const Remove = new Script('sessions-remove', REMOVE);

/** How the index names a caller in its keys: fixed length, whatever the caller's name (a token's subject). */
const callerTag = (caller: string): string => createHash('sha256').update(caller).digest('hex').slice(0, 32);

/**
 * The fleet's 2025-11-25 sessions counted in Redis, each change made by one
 * script, so that the session bounds, and each caller's share of them, hold
 * over every replica. While Redis is lost, the calls fail and the listener
 * falls back on its own bounds.
 */
export class RedisSessions implements SessionIndex {
  private readonly keys: readonly [string, string, string, string, string, string];
  private readonly callers: string;

  constructor(
    private readonly backend: Backend,
    keys: KeySpace,
  ) {
    const { used, unfinished, bytes, memory, owners, callerBytes, caller } = keys.sessions();
    this.keys = [used, unfinished, bytes, memory, owners, callerBytes];
    this.callers = caller;
  }

  async admit(
    id: string,
    bytes: number,
    limits: SessionIndexLimits,
    caller?: string,
  ): Promise<{ admitted: boolean; evicted: string[] }> {
    const size = Math.ceil(bytes);
    const shared = caller !== undefined && limits.maxSessionsPerCaller !== undefined;
    const args = [
      this.callers,
      id,
      size,
      limits.maxSessions,
      limits.maxMemoryBytes,
      limits.idleMs,
      limits.handshakeMs,
      shared ? callerTag(caller) : '',
      limits.maxSessionsPerCaller ?? limits.maxSessions,
      limits.maxMemoryBytesPerCaller ?? limits.maxMemoryBytes,
    ];
    const [admitted, ...evicted] = (await this.backend.run(Admit, this.keys, args)) as [number, ...string[]];
    return { admitted: admitted === 1, evicted };
  }

  async touch(id: string, ready: boolean): Promise<boolean> {
    return (await this.backend.run(Touch, this.keys, [this.callers, id, ready ? 1 : 0])) === 1;
  }

  async remove(id: string): Promise<void> {
    await this.backend.run(Remove, this.keys, [this.callers, id]);
  }
}
