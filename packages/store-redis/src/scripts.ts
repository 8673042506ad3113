import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The Lua scripts behind the semaphore and the counters. Each runs atomically
 * in Redis and reads the time from Redis itself (`TIME`), so replicas never
 * compare their own clocks. Every semaphore script takes the same four keys:
 * leases, queue, queue expiry, fence.
 */

// Shared helpers, prepended to every semaphore script.
const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Drops expired leases and the queue entries of waiters that stopped beating.
local function purge(now)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
  for i = 1, #gone do redis.call('ZREM', KEYS[2], gone[i]) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
end
-- Lets an idle key vanish, never shortening a longer expiry already set.
local function keep(key, ms)
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and ttl < ms) then redis.call('PEXPIRE', key, ms) end
end
-- Slots a waiter at this rank may take now (a negative limit means none).
local function free(max_active)
  if max_active < 0 then return math.huge end
  return max_active - redis.call('ZCARD', KEYS[1])
end
-- A new fence counter starts at Redis time in microseconds, so that tokens keep
-- growing even after Redis lost the old counter (a restart without persistence),
-- or let it expire: an idle key's counter goes with its leases, as every other
-- key of the semaphore does (a key per mutex argument would otherwise stay).
local function admit(id, now, ttl)
  redis.call('ZADD', KEYS[1], now + ttl, id)
  keep(KEYS[1], ttl)
  if redis.call('EXISTS', KEYS[4]) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', KEYS[4], t[1] .. string.format('%06d', tonumber(t[2])))
  end
  local fence = redis.call('INCR', KEYS[4])
  keep(KEYS[4], ttl)
  return fence
end
`;

/**
 * ARGV: id, maxActive (-1: none), maxQueue (-1: none), leaseMs.
 * Returns {status, fence, active, queued}: 0 admitted, 1 queued, 2 shed.
 * A newcomer stands at the tail: it is admitted only if the tail itself
 * would be, so it never overtakes a waiter.
 */
const ACQUIRE = `${PRELUDE}
local id, max_active, max_queue, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
purge(now)
local queued = redis.call('ZCARD', KEYS[2])
if queued < free(max_active) then
  local fence = admit(id, now, ttl)
  return {0, fence, redis.call('ZCARD', KEYS[1]), queued}
end
local active = redis.call('ZCARD', KEYS[1])
if max_queue >= 0 and queued >= max_queue then return {2, 0, active, queued} end
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local order = 1
if #last == 2 then order = tonumber(last[2]) + 1 end
redis.call('ZADD', KEYS[2], order, id)
redis.call('ZADD', KEYS[3], now + ttl, id)
keep(KEYS[2], ttl)
keep(KEYS[3], ttl)
return {1, 0, active, queued + 1}
`;

/**
 * ARGV: maxActive, leaseMs, then this replica's waiter ids in arrival order.
 * For each id returns {status, fence}: 0 admitted, 1 still queued (heartbeat
 * renewed), 2 gone from the queue (its entry expired, or Redis lost it).
 */
const POLL = `${PRELUDE}
local max_active, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
purge(now)
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local rank = redis.call('ZRANK', KEYS[2], id)
  if not rank then
    out[#out + 1] = 2
    out[#out + 1] = 0
  elseif rank < free(max_active) then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZREM', KEYS[3], id)
    out[#out + 1] = 0
    out[#out + 1] = admit(id, now, ttl)
  else
    redis.call('ZADD', KEYS[3], 'XX', now + ttl, id)
    out[#out + 1] = 1
    out[#out + 1] = 0
  end
end
keep(KEYS[2], ttl)
keep(KEYS[3], ttl)
return out
`;

/**
 * ARGV: id, wake channel. Removes this id only (as a lease or as a waiter),
 * and wakes the waiters if any remain. Returns 1 if a lease was held.
 */
const RELEASE = `
local held = redis.call('ZREM', KEYS[1], ARGV[1])
local waited = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if held + waited > 0 and redis.call('ZCARD', KEYS[2]) > 0 then
  redis.call('PUBLISH', ARGV[2], 'wake')
end
return held
`;

/**
 * ARGV: id, leaseMs. Extends a live lease; a lease that already expired is
 * gone for good (another holder may have its slot). Returns 1 if extended.
 */
const REFRESH = `${PRELUDE}
local now = now_ms()
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
keep(KEYS[1], tonumber(ARGV[2]))
return 1
`;

/**
 * KEYS: the counter. ARGV: by, ttlMs ('' for none). A value that is not a
 * number counts as 0 and keeps its expiry; the TTL applies on creation only.
 * Returns the new value (an integer, or a string for fractions).
 */
const INCREMENT = `
local existed = redis.call('EXISTS', KEYS[1])
local value = redis.pcall('INCRBY', KEYS[1], ARGV[1])
if type(value) == 'table' then value = redis.pcall('INCRBYFLOAT', KEYS[1], ARGV[1]) end
if type(value) == 'table' then
  redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
  value = ARGV[1]
end
if existed == 0 and ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value
`;

/**
 * KEYS: the counter. ARGV: by (a whole number), windowMs. A window that
 * starts when the key is made and ends when Redis expires it, so that every
 * replica counts the same window whatever its clock says; a key without a
 * TTL gets one, and a key holding anything but a whole count starts a window
 * afresh. Returns {count, ms left}.
 */
const INCREMENT_WINDOW = `
local held = redis.call('GET', KEYS[1])
if held and not string.match(held, '^-?%d+$') then redis.call('DEL', KEYS[1]) end
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  left = tonumber(ARGV[2])
  redis.call('PEXPIRE', KEYS[1], left)
end
return {value, left}
`;

/** KEYS: the value. ARGV: the expected JSON text. Deletes it only if it holds exactly that; returns 1 if it did. */
const COMPARE_AND_DELETE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** A script with its SHA-1, run by hash and sent in full only when Redis does not know it. */
export class Script {
  readonly sha: string;
  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

export const Scripts = Object.freeze({
  acquire: new Script('acquire', ACQUIRE),
  poll: new Script('poll', POLL),
  release: new Script('release', RELEASE),
  refresh: new Script('refresh', REFRESH),
  increment: new Script('increment', INCREMENT),
  incrementWindow: new Script('increment-window', INCREMENT_WINDOW),
  compareAndDelete: new Script('compare-and-delete', COMPARE_AND_DELETE),
});
