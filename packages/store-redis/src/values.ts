import type { SetOptions, WindowCount } from '@sluice/core';
import { SluiceError } from '@sluice/core';
import type { Backend } from './backend.js';
import { RedisStoreErrorCode, STORE_NAME } from './errors.js';
import type { KeySpace } from './keys.js';
import { Scripts } from './scripts.js';

/** Values travel as JSON, so every replica reads what another wrote. */
export function encode(key: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = jsonOf(value);
  } catch (error) {
    throw invalidValue(key, error instanceof Error ? error.message : String(error));
  }
  if (text === undefined) throw invalidValue(key, `${typeof value} has no JSON form`);
  return text;
}

/** `JSON.stringify` typed as it behaves: undefined for undefined, functions and symbols. */
function jsonOf(value: unknown): string | undefined {
  return JSON.stringify(value);
}

function decode(key: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SluiceError(
      RedisStoreErrorCode.INVALID_VALUE,
      `The value stored at "${key}" is not JSON: something else wrote it`,
      {
        plugin: STORE_NAME,
      },
    );
  }
}

function invalidValue(key: string, why: string): SluiceError {
  return new SluiceError(
    RedisStoreErrorCode.INVALID_VALUE,
    `Cannot store the value for "${key}" in Redis: ${why}; store JSON values`,
    {
      plugin: STORE_NAME,
    },
  );
}

/** Redis wants whole, positive milliseconds. */
function ttlOf(options: SetOptions | undefined): number | undefined {
  return options?.ttlMs === undefined ? undefined : Math.max(1, Math.ceil(options.ttlMs));
}

/** The key-value half of the store: plain commands, one round trip each. */
export class Values {
  constructor(
    private readonly backend: Backend,
    private readonly keys: KeySpace,
  ) {}

  async get<T>(key: string): Promise<T | undefined> {
    const text = await this.backend.command(() => this.backend.connection.client.get(this.keys.value(key)));
    return text === null ? undefined : (decode(key, text) as T);
  }

  async set(key: string, value: unknown, options?: SetOptions): Promise<void> {
    const text = encode(key, value);
    const ttl = ttlOf(options);
    const client = this.backend.connection.client;
    const redisKey = this.keys.value(key);
    await this.backend.command(() =>
      ttl === undefined ? client.set(redisKey, text) : client.set(redisKey, text, 'PX', ttl),
    );
  }

  /** `SET NX PX`: exactly one caller in the cluster wins a key. */
  async setIfAbsent(key: string, value: unknown, options?: SetOptions): Promise<boolean> {
    const text = encode(key, value);
    const ttl = ttlOf(options);
    const client = this.backend.connection.client;
    const redisKey = this.keys.value(key);
    const reply = await this.backend.command(() =>
      ttl === undefined ? client.set(redisKey, text, 'NX') : client.set(redisKey, text, 'PX', ttl, 'NX'),
    );
    return reply === 'OK';
  }

  async delete(key: string): Promise<boolean> {
    return (await this.backend.command(() => this.backend.connection.client.del(this.keys.value(key)))) > 0;
  }

  /** One script: the key goes only if its JSON is exactly the expected value's. */
  async compareAndDelete(key: string, expected: string | number | boolean): Promise<boolean> {
    const reply = await this.backend.run(Scripts.compareAndDelete, [this.keys.value(key)], [encode(key, expected)]);
    return Number(reply) === 1;
  }

  async increment(key: string, by = 1, options?: SetOptions): Promise<number> {
    const ttl = ttlOf(options);
    const reply = await this.backend.run(Scripts.increment, [this.keys.value(key)], [String(by), ttl ?? '']);
    return Number(reply);
  }

  async incrementWindow(key: string, windowMs: number, by: number): Promise<WindowCount> {
    const ttl = Math.ceil(windowMs);
    const reply = await this.backend.run(Scripts.incrementWindow, [this.keys.value(key)], [String(by), String(ttl)]);
    const [count, resetMs] = reply as [number, number];
    return { count, resetMs: Math.max(1, resetMs) };
  }
}
