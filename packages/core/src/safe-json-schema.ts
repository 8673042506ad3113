import { Ajv } from 'ajv';
import type { ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';
import { RE2JS } from 're2js';

/**
 * JSON Schema validation that no schema can make slow.
 *
 * Upstreams are untrusted, and so are their schemas: a `pattern` such as
 * `^(a|aa)+$` makes a backtracking engine (JavaScript's own RegExp) take
 * exponential time on 40-odd characters, which blocks the event loop for
 * every client, beyond the reach of any timeout. Here every `pattern` and
 * `patternProperties` key is compiled by RE2JS, a pure-JavaScript port of
 * RE2 whose matching is linear in the input. Its syntax is RE2's: what
 * JavaScript alone accepts (lookaround, backreferences) does not compile,
 * and such a pattern then matches nothing, so that validation fails closed
 * with "must match pattern". `bench/safe-json-schema.bench.ts` measures the
 * cost against the SDK's default validator.
 */

/**
 * What Ajv calls to compile a pattern: it calls `test`, and keys its cache
 * of compiled patterns by `toString()`, which must therefore name the pattern.
 */
interface PatternMatcher {
  test(text: string): boolean;
  toString(): string;
}

/** Compiled patterns, shared by every schema; bounded, since schemas come from upstreams. */
const patterns = new Map<string, PatternMatcher>();
const MAX_CACHED_PATTERNS = 1_024;
/** A pattern longer than this is refused (it matches nothing): compiling it would cost more than it is worth. */
const MAX_PATTERN_LENGTH = 4_096;

function linearPattern(source: string): PatternMatcher {
  const cached = patterns.get(source);
  if (cached) return cached;
  const name = `re2:${source}`;
  let matcher: PatternMatcher = { test: () => false, toString: () => name };
  if (source.length <= MAX_PATTERN_LENGTH) {
    try {
      const re = RE2JS.compile(source);
      // JSON Schema patterns are unanchored: a match anywhere in the string counts.
      matcher = { test: (text) => re.matcher(text).find(), toString: () => name };
    } catch {
      // Not RE2 syntax: the pattern matches nothing, so validation fails closed.
    }
  }
  if (patterns.size >= MAX_CACHED_PATTERNS) patterns.clear();
  patterns.set(source, matcher);
  return matcher;
}

// Ajv asks for `code` only when generating standalone modules, which Sluice never does.
const regExp = Object.assign((source: string) => linearPattern(source), { code: 'linearPattern' });

/** What Sluice uses of an Ajv engine, whichever dialect's class built it. */
interface Engine {
  compile(schema: object): ValidateFunction;
  removeSchema(schema: object): unknown;
  errorsText(errors?: ErrorObject[] | null): string;
}

type AddFormats = (ajv: Engine) => Engine;
// ajv-formats is CommonJS: its function is the default export, or that export's own `default`.
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

const OPTIONS: AjvOptions = {
  strict: false,
  validateFormats: true,
  validateSchema: false,
  allErrors: true,
  code: { regExp },
};

let engines: { draft2020: Engine; draft2019: Engine; draft7: Engine } | undefined;

function enginesOnce(): NonNullable<typeof engines> {
  engines ??= {
    draft2020: addFormats(new Ajv2020(OPTIONS)),
    draft2019: addFormats(new Ajv2019(OPTIONS)),
    draft7: addFormats(new Ajv(OPTIONS)),
  };
  return engines;
}

/** The engine for a schema's declared dialect: 2020-12 when none is declared, as MCP says. */
function engineFor(schema: JsonSchemaType): Engine {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const all = enginesOnce();
  if (dialect.includes('draft-07') || dialect.includes('draft-06') || dialect.includes('draft-04')) return all.draft7;
  if (dialect.includes('2019-09')) return all.draft2019;
  return all.draft2020;
}

/** Compiled validators, per schema object; dropped with the schema (a re-listed upstream brings new objects). */
const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: JsonSchemaType): { engine: Engine; validate: ValidateFunction } {
  const engine = engineFor(schema);
  const known = compiled.get(schema);
  if (known) return { engine, validate: known };
  // An upstream's `$id` must not collide with another's, nor be looked up in place of its own schema.
  const anonymous: Record<string, unknown> = { ...(schema as Record<string, unknown>) };
  delete anonymous.$id;
  const validate = engine.compile(anonymous);
  // Ajv keeps every schema it compiled; the WeakMap above is the cache instead.
  engine.removeSchema(anonymous);
  compiled.set(schema, validate);
  return { engine, validate };
}

/** A JSON Schema validator provider for the SDK whose patterns run in linear time. */
export class SafeJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const { engine, validate } = compile(schema);
    return (input) =>
      validate(input)
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: engine.errorsText(validate.errors) };
  }
}

let shared: SafeJsonSchemaValidator | undefined;

/** The provider Sluice uses for every JSON Schema it did not write itself. */
export function safeJsonSchemaValidator(): SafeJsonSchemaValidator {
  shared ??= new SafeJsonSchemaValidator();
  return shared;
}
