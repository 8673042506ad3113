/**
 * The identity of one call in a chain: the tool and its arguments, as
 * canonical JSON (keys sorted), so that `{a, b}` and `{b, a}` are the same
 * call. Arguments from an upstream are attacker-shaped and arguments from a
 * local handler may hold anything, so the walk is bounded and never throws.
 */

const MAX_NESTING = 64;
/** Characters of canonical JSON; well above any honest tool's arguments. */
export const MAX_ARGUMENT_CHARS = 256 * 1024;

export type ChainKey = { readonly ok: true; readonly key: string } | { readonly ok: false; readonly message: string };

class KeyProblem extends Error {}

export function chainKey(tool: string, args: unknown): ChainKey {
  const writer = new CanonicalWriter();
  try {
    writer.value(args, 0);
  } catch (error) {
    const message = error instanceof KeyProblem ? error.message : 'the arguments cannot be serialized';
    return { ok: false, message };
  }
  return { ok: true, key: `${tool}\u0000${writer.text()}` };
}

class CanonicalWriter {
  private readonly parts: string[] = [];
  private size = 0;
  private readonly open = new Set<object>();

  text(): string {
    return this.parts.join('');
  }

  value(value: unknown, depth: number): void {
    if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') {
      this.write(JSON.stringify(value));
      return;
    }
    if (typeof value === 'bigint') {
      this.write(`"${value}n"`);
      return;
    }
    if (typeof value !== 'object') {
      this.write('null');
      return;
    }
    if (depth >= MAX_NESTING) throw new KeyProblem(`the arguments are nested more than ${MAX_NESTING} levels deep`);
    if (this.open.has(value)) throw new KeyProblem('the arguments contain a cycle');
    this.open.add(value);
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') this.value(toJSON.call(value), depth + 1);
    else if (Array.isArray(value)) this.array(value, depth);
    else this.object(value as Record<string, unknown>, depth);
    this.open.delete(value);
  }

  private array(items: readonly unknown[], depth: number): void {
    this.write('[');
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.write(',');
      this.value(items[i], depth + 1);
    }
    this.write(']');
  }

  private object(record: Record<string, unknown>, depth: number): void {
    this.write('{');
    let first = true;
    for (const key of Object.keys(record).sort()) {
      const item = record[key];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      this.write(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      this.value(item, depth + 1);
    }
    this.write('}');
  }

  private write(text: string): void {
    this.size += text.length;
    if (this.size > MAX_ARGUMENT_CHARS)
      throw new KeyProblem(`the arguments exceed ${MAX_ARGUMENT_CHARS} characters as JSON`);
    this.parts.push(text);
  }
}
