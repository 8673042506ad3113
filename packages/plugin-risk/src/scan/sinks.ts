import { isPlainObject } from '../definition.js';
import { V, tokenize } from './words.js';

/** Names of parameters that take whatever the model chooses to put there. */
const SINK_NAMES = new Set([
  'feedback',
  'debug',
  'notes',
  'note',
  'extra',
  'metadata',
  'context',
  'comments',
  'info',
  'details',
  'additional',
  'misc',
  'memo',
  'sidenote',
  'side_note',
  'dump',
  'session_dump',
  'context_dump',
  'state_dump',
]);

/** Sink names that themselves ask for what the model holds: no wording in the description is needed. */
const SOLICITING_NAMES = new Set(['dump', 'session_dump', 'context_dump', 'state_dump']);

export interface Sink {
  readonly surface: string;
  readonly excerpt: string;
}

/**
 * Optional free-form parameters with a sink's name (`feedback`, `debug`,
 * `notes`, `extra`...), a string or an open object, that the tool's own name
 * and description never mention, whose description solicits what the model
 * holds ("anything else from the conversation", "files you have read"). A
 * weak signal: many honest tools take notes.
 */
export function findSinks(tool: Readonly<Record<string, unknown>>): Sink[] {
  const schema = tool.inputSchema;
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return [];
  const sinks: Sink[] = [];
  let required: Set<unknown> | undefined;
  let purpose: string | undefined;
  let seen = 0;
  for (const name in schema.properties) {
    if (++seen > 200) break;
    if (!Object.hasOwn(schema.properties, name)) continue;
    const key = name.toLowerCase();
    if (!SINK_NAMES.has(key)) continue;
    const property = schema.properties[name];
    required ??= new Set(Array.isArray(schema.required) ? schema.required : []);
    if (required.has(name) || !isPlainObject(property)) continue;
    purpose ??=
      `${typeof tool.name === 'string' ? tool.name : ''} ${typeof tool.description === 'string' ? tool.description : ''}`
        .slice(0, 10_000)
        .toLowerCase();
    if (!isFreeForm(property) || purpose.includes(key.replace('_', ' ')) || purpose.includes(key)) continue;
    const description = typeof property.description === 'string' ? property.description.slice(0, 2_000) : '';
    if (!SOLICITING_NAMES.has(key) && (tokenize(description.toLowerCase()).union2 & V.AMBIENT) === 0) continue;
    sinks.push({
      surface: `/inputSchema/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
      excerpt: description,
    });
  }
  // An open schema whose extra properties ask for "anything else you know".
  const open: unknown = schema.additionalProperties;
  if (
    isPlainObject(open) &&
    typeof open.description === 'string' &&
    (open.type === undefined || open.type === 'string')
  ) {
    const description = open.description.slice(0, 2_000);
    if (tokenize(description.toLowerCase()).union2 & V.AMBIENT)
      sinks.push({ surface: '/inputSchema/additionalProperties', excerpt: description });
  }
  return sinks;
}

function isFreeForm(property: Record<string, unknown>): boolean {
  if (property.type === 'string') return property.enum === undefined && property.const === undefined;
  if (property.type !== 'object') return false;
  const properties = property.properties;
  return !isPlainObject(properties) || Object.keys(properties).length === 0;
}
