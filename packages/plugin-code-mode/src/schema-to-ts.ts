/**
 * Renders a JSON Schema as a TypeScript type, compactly: what a model needs to
 * write a correct call. Schemas come from upstreams, so the walk is bounded
 * in depth and in output, and anything it does not model becomes `unknown`.
 */

const MAX_DEPTH = 8;
const MAX_CHARS = 4_000;
const MAX_MEMBERS = 64;

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A string literal type; JSON quoting is valid TypeScript. */
const literal = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null
    ? JSON.stringify(value)
    : 'unknown';

/** A property key: bare when it is an identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The TypeScript type of a JSON Schema; `unknown` for anything beyond the bounds. */
export function schemaToTs(schema: unknown): string {
  const text = render(schema, 0);
  return text.length > MAX_CHARS ? 'Record<string, unknown>' : text;
}

function render(schema: unknown, depth: number): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isSchema(schema) || depth > MAX_DEPTH) return 'unknown';
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.slice(0, MAX_MEMBERS).map(literal));
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants)) return union(variants.slice(0, MAX_MEMBERS).map((v) => render(v, depth + 1)));
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.slice(0, MAX_MEMBERS).map((v) => wrap(render(v, depth + 1)));
    return parts.length === 0 ? 'unknown' : parts.join(' & ');
  }
  const type = schema.type;
  if (Array.isArray(type)) return union(type.slice(0, 8).map((t) => renderType(schema, t, depth)));
  if (typeof type === 'string') return renderType(schema, type, depth);
  if (isSchema(schema.properties)) return renderObject(schema, depth);
  if (isSchema(schema.items)) return renderType(schema, 'array', depth);
  return 'unknown';
}

function renderType(schema: Schema, type: unknown, depth: number): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return renderArray(schema, depth);
    case 'object':
      return renderObject(schema, depth);
    default:
      return 'unknown';
  }
}

function renderArray(schema: Schema, depth: number): string {
  if (Array.isArray(schema.prefixItems)) {
    return `[${schema.prefixItems
      .slice(0, MAX_MEMBERS)
      .map((item) => render(item, depth + 1))
      .join(', ')}]`;
  }
  return `${wrap(render(schema.items, depth + 1))}[]`;
}

function renderObject(schema: Schema, depth: number): string {
  const properties = isSchema(schema.properties) ? Object.entries(schema.properties).slice(0, MAX_MEMBERS) : [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
  const members = properties.map(
    ([name, value]) => `${propertyKey(name)}${required.has(name) ? '' : '?'}: ${render(value, depth + 1)}`,
  );
  const extra = schema.additionalProperties;
  if (isSchema(extra)) members.push(`[key: string]: ${render(extra, depth + 1)}`);
  else if (extra !== false && properties.length === 0) return 'Record<string, unknown>';
  return members.length === 0 ? '{}' : `{ ${members.join('; ')} }`;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.length === 0) return 'never';
  if (unique.includes('unknown')) return 'unknown';
  return unique.map(wrap).join(' | ');
}

// Parenthesize a union or intersection where it becomes an array element or a member of another.
function wrap(type: string): string {
  return hasTopLevelOperator(type) ? `(${type})` : type;
}

/** Whether `|` or `&` appears outside brackets and string literals. */
function hasTopLevelOperator(type: string): boolean {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i];
    if (c === '"') {
      for (i++; i < type.length && type[i] !== '"'; i++) if (type[i] === '\\') i++;
    } else if (c === '{' || c === '[' || c === '(' || c === '<') depth++;
    else if (c === '}' || c === ']' || c === ')' || c === '>') depth--;
    else if ((c === '|' || c === '&') && depth === 0) return true;
  }
  return false;
}
