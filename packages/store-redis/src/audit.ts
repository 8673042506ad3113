import { AUDIT_GENESIS } from '@sluice/core';
import type { AuditHead, AuditPage, AuditRecords, StoredAuditEntry } from '@sluice/core';
import type { Backend } from './backend.js';
import type { KeySpace } from './keys.js';
import { Script } from './scripts.js';

/**
 * KEYS: entries (sorted set, score = number, member = JSON), head, anchor.
 * ARGV: expected seq, expected hash, seq, hash, text, maxEntries, genesis.
 * Appends only if the head is still the expected one; then drops the oldest
 * entries past maxEntries and moves the anchor past them, naming the hash of
 * the last one dropped. Returns {appended (0/1), head seq, head hash}.
 */
const APPEND = `
local head = redis.call('HMGET', KEYS[2], 'seq', 'hash')
local seq = tonumber(head[1]) or 0
local hash = head[2] or ARGV[7]
if seq ~= tonumber(ARGV[1]) or hash ~= ARGV[2] then return {0, seq, hash} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[5])
redis.call('HSET', KEYS[2], 'seq', ARGV[3], 'hash', ARGV[4])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[6])
if excess > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[1], excess)
  local ok, decoded = pcall(cjson.decode, gone[#gone - 1])
  local prev = 'unreadable'
  if ok and type(decoded) == 'table' and type(decoded['hash']) == 'string' then prev = decoded['hash'] end
  redis.call('HSET', KEYS[3], 'seq', tostring(tonumber(gone[#gone]) + 1), 'prev', prev)
end
return {1, tonumber(ARGV[3]), ARGV[4]}
`;

/** KEYS as above; ARGV: after, limit. Returns {head seq, head hash, anchor seq, anchor prev, {member, score, ...}}. */
const READ = `
local head = redis.call('HMGET', KEYS[2], 'seq', 'hash')
local anchor = redis.call('HMGET', KEYS[3], 'seq', 'prev')
local entries = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
return {head[1] or '0', head[2] or '', anchor[1] or '1', anchor[2] or '', entries}
`;

const Append = new Script('audit-append', APPEND);
const Read = new Script('audit-read', READ);

/**
 * The audit chain in Redis, shared by every replica: a sorted set of
 * entries by number, the head and the anchor, each changed only by one
 * script. Never served from a replica's local fallback while Redis is lost:
 * a chain kept apart would fork, so an append then fails (and the log says so).
 */
export class RedisAudit implements AuditRecords {
  private readonly keys: readonly [string, string, string];

  constructor(
    private readonly backend: Backend,
    keys: KeySpace,
  ) {
    const { entries, head, anchor } = keys.audit();
    this.keys = [entries, head, anchor];
  }

  async head(): Promise<AuditHead> {
    const [seq, hash] = await this.backend.command(() =>
      this.backend.connection.client.hmget(this.keys[1], 'seq', 'hash'),
    );
    return { seq: seq === null ? 0 : Number(seq), hash: hash ?? AUDIT_GENESIS };
  }

  async append(
    entry: StoredAuditEntry & { readonly hash: string },
    expected: AuditHead,
    maxEntries: number,
  ): Promise<{ appended: boolean; head: AuditHead }> {
    const args = [expected.seq, expected.hash, entry.seq, entry.hash, entry.text, maxEntries, AUDIT_GENESIS];
    const [appended, seq, hash] = (await this.backend.run(Append, this.keys, args)) as [number, number, string];
    return { appended: appended === 1, head: { seq, hash } };
  }

  async read(after: number, limit: number): Promise<AuditPage> {
    const reply = (await this.backend.run(Read, this.keys, [after, limit])) as [
      string,
      string,
      string,
      string,
      string[],
    ];
    const [headSeq, headHash, anchorSeq, anchorPrev, flat] = reply;
    const entries: StoredAuditEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ seq: Number(flat[i + 1]), text: flat[i] as string });
    return {
      head: { seq: Number(headSeq), hash: headHash === '' ? AUDIT_GENESIS : headHash },
      anchor: { seq: Number(anchorSeq), prev: anchorPrev === '' ? AUDIT_GENESIS : anchorPrev },
      entries,
    };
  }
}
