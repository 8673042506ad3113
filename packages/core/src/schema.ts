import type { JsonSchemaValidator, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { CoreErrorCode, SluiceError } from './errors.js';
import { safeJsonSchemaValidator } from './safe-json-schema.js';

export type { StandardSchemaWithJSON };

/** A JSON Schema object, as tools carry on the wire. */
export type JsonSchema = Record<string, unknown>;

/** A schema given to `server.tool()`: zod (or any Standard Schema with JSON), or plain JSON Schema. */
export type SchemaInput = StandardSchemaWithJSON | JsonSchema;

/** Infers the handler's argument type from a tool's input schema. */
export type InferArgs<S> = S extends StandardSchemaWithJSON
  ? StandardSchemaWithJSON.InferOutput<S>
  : Record<string, unknown>;

export interface CompiledSchema {
  /** The JSON Schema shown in `tools/list`. */
  readonly json: JsonSchema;
  /** Returns the parsed value, or a readable list of what is wrong. */
  validate(value: unknown): ValidationResult | Promise<ValidationResult>;
}

export type ValidationResult = { ok: true; value: unknown } | { ok: false; message: string };

export function isStandardSchema(value: unknown): value is StandardSchemaWithJSON {
  const std = (value as { '~standard'?: { validate?: unknown } | null } | null)?.['~standard'];
  return typeof std === 'object' && std !== null && typeof std.validate === 'function';
}

/**
 * Compiles a tool's input or output schema once, at registration. Both must
 * describe an object, as MCP requires.
 */
export function compileSchema(schema: SchemaInput, direction: 'input' | 'output', tool: string): CompiledSchema {
  if (!isStandardSchema(schema)) return compileJsonSchema(schema, direction, tool);
  const json = toJson(schema, direction, tool);
  assertObject(json, direction, tool);
  const validate = schema['~standard'].validate;
  return {
    json,
    validate(value) {
      const outcome = validate(value);
      return outcome instanceof Promise ? outcome.then(toResult) : toResult(outcome);
    },
  };
}

function assertObject(json: JsonSchema, direction: string, tool: string): void {
  if (json.type !== 'object') {
    throw new SluiceError(
      CoreErrorCode.INVALID_TOOL,
      `Tool "${tool}": the ${direction} schema must describe an object (type: "object")`,
    );
  }
}

/** A plain JSON Schema, checked by the core's own validator (linear-time patterns). */
function compileJsonSchema(schema: JsonSchema, direction: string, tool: string): CompiledSchema {
  // JavaScript callers may pass null.
  if (typeof schema !== 'object' || (schema as JsonSchema | null) === null || Array.isArray(schema)) {
    throw new SluiceError(
      CoreErrorCode.INVALID_TOOL,
      `Tool "${tool}": the ${direction} schema must be a zod schema or a JSON Schema object`,
    );
  }
  let check: JsonSchemaValidator<unknown>;
  try {
    check = safeJsonSchemaValidator().getValidator(schema);
  } catch (error) {
    throw new SluiceError(CoreErrorCode.INVALID_TOOL, `Tool "${tool}": the ${direction} JSON Schema does not compile`, {
      cause: error,
    });
  }
  assertObject(schema, direction, tool);
  return {
    json: schema,
    validate(value) {
      const result = check(value);
      return result.valid ? { ok: true, value: result.data } : { ok: false, message: result.errorMessage };
    },
  };
}

function toJson(schema: StandardSchemaWithJSON, direction: 'input' | 'output', tool: string): JsonSchema {
  try {
    const json = schema['~standard'].jsonSchema[direction]({ target: 'draft-2020-12' });
    // `$schema` is noise for clients; the protocol fixes the dialect.
    const rest = { ...json };
    delete rest.$schema;
    return rest;
  } catch (error) {
    throw new SluiceError(
      CoreErrorCode.INVALID_TOOL,
      `Tool "${tool}": the ${direction} schema cannot be shown as JSON Schema`,
      { cause: error },
    );
  }
}

interface StandardOutcome {
  value?: unknown;
  issues?: ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }>;
}

function toResult(outcome: StandardOutcome): ValidationResult {
  if (!outcome.issues) return { ok: true, value: outcome.value };
  const lines = outcome.issues.slice(0, 10).map((issue) => {
    const path = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const more = outcome.issues.length > 10 ? `; and ${outcome.issues.length - 10} more` : '';
  return { ok: false, message: lines.join('; ') + more };
}
