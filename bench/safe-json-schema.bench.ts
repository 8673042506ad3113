// What linear-time patterns cost: Sluice validates every JSON Schema it did
// not write (upstream output schemas, chained arguments) with Ajv whose
// `pattern` and `patternProperties` run on RE2JS, against the SDK's default
// validator (Ajv on JavaScript's backtracking RegExp), measured in the same
// run:
// (1) validating a typical tool result (a few string patterns, nested objects);
// (2) the same with no pattern at all (the engine is never used);
// (3) compiling a schema, as a re-listed upstream brings new ones;
// (4) a catastrophic pattern (`^(a|aa)+$`) on inputs of growing length, with
//     the linear engine only: the backtracking one needs ~2^(n/2) steps.
// Run: cd packages/core && node --conditions=sluice:source --import tsx ../../bench/safe-json-schema.bench.ts
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { SafeJsonSchemaValidator } from '../packages/core/src/index.js';
import { nsPerOp, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const ITER = quick ? 20_000 : 200_000;

const withPatterns = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9-]{8,64}$' },
    email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$' },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+(-[a-z]+)*$' } },
    meta: { type: 'object', patternProperties: { '^x-[a-z]+$': { type: 'string' } } },
    count: { type: 'integer', minimum: 0 },
  },
  required: ['id', 'email'],
};
const plain = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 8 },
    email: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    meta: { type: 'object' },
    count: { type: 'integer', minimum: 0 },
  },
  required: ['id', 'email'],
};
const value = {
  id: 'order-2024-000173',
  email: 'someone@example.org',
  tags: ['express', 'gift-wrap', 'fragile'],
  meta: { 'x-source': 'web', 'x-campaign': 'spring' },
  count: 3,
};

const sdk = new AjvJsonSchemaValidator();
const safe = new SafeJsonSchemaValidator();
const rows: Record<string, string | number>[] = [];
const results: Record<string, number> = {};

for (const [label, schema] of [
  ['validate, 4 patterns', withPatterns],
  ['validate, no pattern', plain],
] as const) {
  const a = sdk.getValidator(schema);
  const b = safe.getValidator(schema);
  if (!a(value).valid || !b(value).valid) throw new Error(`${label}: the sample value must be valid`);
  const sdkNs = nsPerOp(() => a(value), ITER);
  const safeNs = nsPerOp(() => b(value), ITER);
  rows.push({
    case: label,
    'sdk ns/op': Math.round(sdkNs),
    'sluice ns/op': Math.round(safeNs),
    ratio: ratio(safeNs, sdkNs),
  });
  results[label] = ratio(safeNs, sdkNs);
}

// Compiling: a fresh schema object each time (a cache keyed by object would otherwise answer).
const compileIter = quick ? 200 : 2_000;
const fresh = () => JSON.parse(JSON.stringify(withPatterns)) as Record<string, unknown>;
const sdkCompile = nsPerOp(() => sdk.getValidator(fresh()), compileIter);
const safeCompile = nsPerOp(() => safe.getValidator(fresh()), compileIter);
rows.push({
  case: 'compile, 4 patterns',
  'sdk ns/op': Math.round(sdkCompile),
  'sluice ns/op': Math.round(safeCompile),
  ratio: ratio(safeCompile, sdkCompile),
});
results['compile, 4 patterns'] = ratio(safeCompile, sdkCompile);
printTable('Validation, Sluice (RE2JS patterns) against the SDK default (RegExp)', rows);

const evil = safe.getValidator({
  type: 'object',
  properties: { s: { type: 'string', pattern: '^(a|aa)+$' } },
});
const growth: Record<string, string | number>[] = [];
for (const n of [40, 400, 4_000, 40_000]) {
  const input = { s: `${'a'.repeat(n)}b` };
  const ns = nsPerOp(() => evil(input), quick ? 20 : 200);
  growth.push({ 'input length': n + 1, 'µs/op': Math.round(ns / 1_000), 'ns per character': Math.round(ns / (n + 1)) });
}
printTable('^(a|aa)+$ on a...ab, linear engine (a backtracking engine needs minutes from ~45 characters)', growth);
writeResult('safe-json-schema', { ratios: results, catastrophic: growth });
