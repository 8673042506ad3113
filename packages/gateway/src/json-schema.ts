import { z } from 'zod';
import { GatewayConfig } from './config-schema.js';

/** Where the schema is published: the file `sluice schema --out` writes, as the package ships it. */
export const GATEWAY_SCHEMA_ID =
  'https://raw.githubusercontent.com/sluice-dev/sluice/main/packages/gateway/config.schema.json';

/** A `${NAME}` or `${NAME:-fallback}` reference, which the gateway substitutes before validating. */
const VARIABLE_REFERENCE = {
  type: 'string',
  pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}',
  description: 'An environment variable reference, ${NAME} or ${NAME:-fallback}, substituted before validation',
} as const;

type Schema = Record<string, unknown>;

/**
 * The JSON Schema (draft 2020-12) of the config file as written: fields with
 * defaults are optional, and wherever a field takes a number, a boolean or a
 * constrained string, a `${VAR}` reference is valid too, since substitution
 * happens first. Built from the same zod schema that validates it, which
 * reuses each plugin's own options schema.
 */
export function gatewayJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(GatewayConfig, { io: 'input', target: 'draft-2020-12' }) as Schema;
  const { $schema, ...rest } = allowReferences(schema) as Schema;
  return {
    $schema,
    $id: GATEWAY_SCHEMA_ID,
    title: 'Sluice gateway config',
    description: 'The config file of `sluice serve`: upstreams, plugins, listeners, store.',
    ...rest,
  };
}

/** Whether a leaf schema would reject a `${VAR}` string. */
function rejectsReferences(node: Schema): boolean {
  if ('enum' in node || 'const' in node) return true;
  const type = node.type;
  if (type === 'number' || type === 'integer' || type === 'boolean') return true;
  if (type === 'string') return 'pattern' in node || 'format' in node || 'maxLength' in node;
  return false;
}

function allowReferences(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(allowReferences);
  if (typeof value !== 'object' || value === null) return value;
  const node: Schema = {};
  for (const [key, child] of Object.entries(value as Schema)) {
    // Keys under `properties` and `$defs` are names, not keywords: recurse into their values only.
    node[key] = allowReferences(child);
  }
  if (!rejectsReferences(node)) return node;
  const { description, default: fallback, ...constraint } = node;
  return {
    ...(description === undefined ? {} : { description }),
    ...(fallback === undefined ? {} : { default: fallback }),
    anyOf: [constraint, VARIABLE_REFERENCE],
  };
}
