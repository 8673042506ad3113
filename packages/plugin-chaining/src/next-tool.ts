import { MetaKey } from '@sluice/core';
import type { CallToolResult, StandardSchemaWithJSON } from '@sluice/core';

/** Arguments by tool name: the shape `typedNext()` checks against. */
export type ToolArgMap = { readonly [tool: string]: Record<string, unknown> };

/** The `_meta` fragment that names the next tool. */
// A type alias, not an interface: it must stay assignable to a result's index signature.
export type NextToolMeta<Args extends Record<string, unknown> = Record<string, unknown>> = {
  _meta: { [MetaKey.NEXT_TOOL]: { tool: string; arguments: Args } };
};

/**
 * Names the tool to run after this one. Spread it into a result:
 * `return { content, ...next('initiate_human_handoff', { customerId }) }`.
 * To keep a `_meta` the result already has, use `withNext`.
 */
export function next<Args extends Record<string, unknown>>(tool: string, args: Args = {} as Args): NextToolMeta<Args> {
  // A literal key (MetaKey.NEXT_TOOL, checked by the type): a computed one builds a slower object.
  return { _meta: { 'dev.sluice/nextTool': { tool, arguments: args } } };
}

/** Returns a copy of `result` whose `_meta` also names the tool to run next. */
export function withNext<R extends CallToolResult>(
  result: R,
  tool: string,
  args: Record<string, unknown> = {},
): R & NextToolMeta {
  return { ...result, _meta: { ...result._meta, 'dev.sluice/nextTool': { tool, arguments: args } } };
}

/** Tool names of a union or of an argument map. */
type NameOf<T> = T extends string ? T : keyof T & string;
/** A tool's arguments: from the map, or any object when only names are known. */
type ArgsOf<T, N extends string> = T extends string ? Record<string, unknown> : T extends ToolArgMap ? T[N] : never;

/** `next` and `withNext`, checked against the tools of a server. */
export interface TypedNext<T extends string | ToolArgMap> {
  next<N extends NameOf<T>>(tool: N, args: ArgsOf<T, N>): NextToolMeta<ArgsOf<T, N>>;
  withNext<R extends CallToolResult, N extends NameOf<T>>(
    result: R,
    tool: N,
    args: ArgsOf<T, N>,
  ): R & NextToolMeta<ArgsOf<T, N>>;
}

/**
 * `next` and `withNext` that only accept the tools you name: a union of
 * names (`typedNext<'a' | 'b'>()`), or a map of names to arguments, such as
 * `ToolArgsOf<typeof tools>` derived from the definitions you register.
 */
export function typedNext<T extends string | ToolArgMap>(): TypedNext<T> {
  return { next, withNext } as TypedNext<T>;
}

/** The arguments (the schema's input side) a definition's `inputSchema` accepts. */
type InputOf<S> = S extends StandardSchemaWithJSON
  ? StandardSchemaWithJSON.InferInput<S> & Record<string, unknown>
  : Record<string, unknown>;

/**
 * A map of tool names to arguments from tool definitions whose names are
 * literal types (`name: 'check_account_issue' as const`, or an `as const` array).
 */
export type ToolArgsOf<Defs extends readonly { readonly name: string; readonly inputSchema?: unknown }[]> = {
  [D in Defs[number] as D['name']]: InputOf<D['inputSchema']>;
};
