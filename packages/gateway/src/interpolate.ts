import { GatewayErrorCode, configError } from './errors.js';

export type Environment = Readonly<Record<string, string | undefined>>;

// `$${` is a literal `${`; `${NAME}` and `${NAME:-fallback}` read the environment.
const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const NAME_AND_FALLBACK = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/**
 * Replaces `${NAME}` in every string of a parsed JSON value (object keys are
 * left alone) with the environment variable NAME, and `${NAME:-fallback}`
 * with the fallback when NAME is unset or empty. A reference to a variable
 * that is not set fails naming the variable and the path of the field: never
 * the value, since these hold secrets. `used`, when given, collects the
 * values read from the environment for `upstreams` and `store`: the
 * gateway hides them wherever upstream text reaches logs or results.
 */
export function interpolateEnv(
  value: unknown,
  env: Environment,
  path: readonly (string | number)[] = [],
  used?: Set<string>,
): unknown {
  if (typeof value === 'string') return interpolateString(value, env, path, used);
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, [...path, index], used));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // JSON.parse gives `__proto__` as an own key; keep it a plain key, never a prototype.
    Object.defineProperty(out, key, {
      value: interpolateEnv(item, env, [...path, key], used),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Where a value read from the environment is treated as a secret: what upstreams and the store are given. */
const SECRET_SECTIONS: readonly unknown[] = ['upstreams', 'store'];

function interpolateString(
  text: string,
  env: Environment,
  path: readonly (string | number)[],
  used: Set<string> | undefined,
): string {
  if (!text.includes('${')) return text;
  return text.replace(REFERENCE, (whole, inner: string | undefined) => {
    if (inner === undefined) return '${';
    const match = NAME_AND_FALLBACK.exec(inner);
    const where = path.length > 0 ? path.join('.') : '(config)';
    if (match === null) {
      throw configError(
        GatewayErrorCode.CONFIG_INVALID,
        `${where}: "${whole}" is not a variable reference; use \${NAME} or \${NAME:-fallback}`,
      );
    }
    const [, name, fallback] = match as unknown as [string, string, string | undefined];
    const set = env[name];
    if (fallback !== undefined && (set === undefined || set === '')) return fallback;
    if (set === undefined)
      throw configError(GatewayErrorCode.ENV_MISSING, `${where}: environment variable ${name} is not set`);
    if (used && SECRET_SECTIONS.includes(path[0])) used.add(set);
    return set;
  });
}
