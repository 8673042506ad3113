/**
 * Words a binding may not use as a name: the language's reserved words and
 * the globals a script relies on, so that no upstream can shadow `JSON` or
 * `ToolError` by its choice of name.
 */
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for ' +
    'function if import in instanceof new null return super switch this throw true try typeof var void while with ' +
    'yield let static implements interface package private protected public await async of arguments eval ' +
    'undefined NaN Infinity globalThis Object Function Array Number String Boolean Symbol BigInt Math JSON Date ' +
    'RegExp Error TypeError RangeError SyntaxError ReferenceError EvalError URIError InternalError AggregateError ' +
    'Promise Proxy Reflect Map Set WeakMap WeakSet WeakRef ArrayBuffer DataView Iterator console callTool ToolError ' +
    'servers tools resources prompts parseInt parseFloat isNaN isFinite __proto__ constructor prototype toString valueOf hasOwnProperty'
  ).split(' '),
);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Whether `name` can stand as a property name without quotes. */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** A JavaScript identifier for a server or tool name: other characters become `_`, a clash with a reserved word gets a trailing `_`. */
export function toIdentifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (id.length === 0 || /^[0-9]/.test(id)) id = `_${id}`;
  return RESERVED.has(id) ? `${id}_` : id;
}

/** Picks `base`, or `base_2`, `base_3`... whichever `taken` does not hold yet, and takes it. */
export function uniqueIn(taken: Set<string>, base: string): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}
