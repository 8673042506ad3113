// Generators of what a hostile client and a hostile upstream send a gateway:
// deeply nested arguments for an imported tool, large `initialize` params,
// floods of sessions, upstream schemas with catastrophic patterns, upstream
// answers that are huge, deep or malformed, and strings shaped to break
// metric labels. Deep values are built as text: JSON.stringify would
// overflow the test's own stack.
import fc from 'fast-check';

/** Nesting from just past the limit (64) to far beyond any recursive walk. */
export const deepArgumentsText: fc.Arbitrary<string> = fc
  .record({
    depth: fc.oneof(fc.integer({ min: 65, max: 200 }), fc.integer({ min: 1_000, max: 50_000 })),
    kind: fc.constantFrom('array', 'object'),
  })
  .map(({ depth, kind }) =>
    kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

/** An `initialize` body opening a 2025-11-25 session, with `clientInfo` of up to 3.5 MB. */
export const largeInitializeText: fc.Arbitrary<{ body: string; bytes: number }> = fc
  .record({
    nameBytes: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 60_000, max: 3_500_000 })),
    extra: fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 64 }), { maxKeys: 8 }),
  })
  .map(({ nameBytes, extra }) => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { experimental: { robustness: extra } },
        clientInfo: { name: 'n'.repeat(nameBytes), version: '1' },
      },
    });
    return { body, bytes: Buffer.byteLength(body) };
  });

/** A flood of an upstream's log messages during one call: lines around 64 KiB, and enough together to pass 1 MiB. */
export const logFlood: fc.Arbitrary<{ count: number; bytes: number }> = fc.record({
  count: fc.integer({ min: 1, max: 60 }),
  bytes: fc.oneof(
    fc.integer({ min: 3, max: 2_000 }),
    fc.integer({ min: 65_536 - 200, max: 65_536 + 200 }),
    fc.integer({ min: 20_000, max: 400_000 }),
  ),
});

/** How many bare `initialize` requests a flood sends: around and far past a small cap. */
export const sessionFlood: fc.Arbitrary<number> = fc.integer({ min: 10, max: 400 });

/** Patterns a backtracking engine needs exponential time for, with the input that shows it. */
const CATASTROPHIC: readonly { pattern: string; defeat: (n: number) => string }[] = [
  { pattern: '^(a|aa)+$', defeat: (n) => `${'a'.repeat(n)}b` },
  { pattern: '^(a+)+$', defeat: (n) => `${'a'.repeat(n)}!` },
  { pattern: '^([a-z]+)*[0-9]$', defeat: (n) => 'x'.repeat(n) },
  { pattern: '(x+x+)+y', defeat: (n) => 'x'.repeat(n) },
  { pattern: '^(\\w+\\s?)*$', defeat: (n) => `${'word '.repeat(n)}!` },
];

export interface HostileSchema {
  readonly name: string;
  readonly outputSchema: Record<string, unknown>;
  /** A structuredContent that makes a backtracking engine take exponential time on the schema's pattern. */
  readonly defeat: Record<string, unknown>;
  /**
   * Whether `defeat` satisfies the schema: a `pattern` it fails to match makes
   * it invalid; a `patternProperties` key it fails to match puts no constraint on it.
   */
  readonly valid: boolean;
}

/** Output schemas an upstream lists, each with a catastrophic `pattern` or `patternProperties` key. */
export function hostileSchemas(count: number, seed: number): HostileSchema[] {
  return fc
    .sample(
      fc.record({
        which: fc.nat({ max: CATASTROPHIC.length - 1 }),
        n: fc.integer({ min: 30, max: 60 }),
        keyed: fc.boolean(),
      }),
      { numRuns: count, seed },
    )
    .map(({ which, n, keyed }, i) => {
      const { pattern, defeat } = CATASTROPHIC[which]!;
      const outputSchema = keyed
        ? { type: 'object', patternProperties: { [pattern]: { type: 'number' } } }
        : { type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'] };
      return {
        name: `schema_${i}`,
        outputSchema,
        defeat: keyed ? { [defeat(n)]: 'not a number' } : { s: defeat(n) },
        valid: keyed,
      };
    });
}

/** Strings shaped to break a Prometheus label or blow up a metric's series: quotes, newlines, braces, 1 MiB. */
export const labelShaped: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('a"b', 'a\nb', 'x{y="z"}', '\\', 'UPPER_BUT_VALID', 'Ω', ''),
  fc.integer({ min: 1_000, max: 1_048_576 }).map((n) => 'Z'.repeat(n)),
);

/** The arguments of the hostile upstream's `scripted` tool: what it answers (see hostile-upstream.mjs). */
export const hostileAnswer: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((result) => ({ result })),
  fc.constantFrom(null, [], 'text', { content: 'not a list' }, { content: [{ type: 'image' }] }).map((result) => ({
    result,
  })),
  fc.integer({ min: 1, max: 12 }).map((mib) => ({ hugeBytes: mib * 2 ** 20 })),
  // Far deeper than 1,000 levels, the hostile upstream's own JSON.stringify overflows (it crashes, which is another test).
  fc.integer({ min: 100, max: 1_000 }).map((deep) => ({ deep })),
  labelShaped.map((label) => ({ label })),
);
