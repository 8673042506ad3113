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
 * the value, since these hold secrets.
 */
export function interpolateEnv(value: unknown, env: Environment, path: readonly (string | number)[] = []): unknown {
  if (typeof value === 'string') return interpolateString(value, env, path);
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, [...path, index]));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // JSON.parse gives `__proto__` as an own key; keep it a plain key, never a prototype.
    Object.defineProperty(out, key, {
      value: interpolateEnv(item, env, [...path, key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function interpolateString(text: string, env: Environment, path: readonly (string | number)[]): string {
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
    if (fallback !== undefined) return set === undefined || set === '' ? fallback : set;
    if (set === undefined)
      throw configError(GatewayErrorCode.ENV_MISSING, `${where}: environment variable ${name} is not set`);
    return set;
  });
}
