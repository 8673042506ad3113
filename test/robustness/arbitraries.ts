// Generators of hostile JSON-RPC, as text: what a broken or malicious peer can
// put on the wire, including what JSON.stringify cannot produce (200,000 levels
// of nesting, integers beyond 2^53, lone surrogates, own `__proto__` keys).
import fc from 'fast-check';
import { ENVELOPE } from './rpc.js';

/** Nesting deep enough to overflow any recursive walk of the value. */
export const DEEP_LEVELS = 200_000;
const DEEP_ARRAY = '['.repeat(DEEP_LEVELS) + ']'.repeat(DEEP_LEVELS);
const DEEP_OBJECT = '{"a":'.repeat(DEEP_LEVELS) + '1' + '}'.repeat(DEEP_LEVELS);

const quote = (text: string): string => JSON.stringify(text);

/** Object text from key/value texts; keys may repeat and may be `__proto__`. */
const objectText = (entries: readonly (readonly [string, string])[]): string =>
  `{${entries.map(([k, v]) => `${quote(k)}:${v}`).join(',')}}`;

// Past the egress limit, past the HTTP body limit (4 MiB), and in between.
const hugeString = fc.constantFrom(70_000, 300_000, 5_000_000).map((size) => quote('x'.repeat(size)));

const loneSurrogates = fc.constantFrom('"\\ud800"', '"a\\udfffb"', '"\\udc00\\ud800"', '"\\ud83d"', quote('\ud800'));

const oddNumbers = fc.constantFrom(
  '9007199254740993',
  '-9007199254740993',
  '123456789012345678901234567890',
  '1e400',
  '-0',
  '1.5e-400',
  '0.1',
);

const protoObject = fc.constantFrom(
  '{"__proto__":{"polluted":true,"isAdmin":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"__proto__":null}',
  '{"prototype":{"polluted":true},"__proto__":[]}',
);

/** Any JSON value text, from plain to pathological. */
export const valueText: fc.Arbitrary<string> = fc.oneof(
  // Huge and deep values are rare per value, but every request has several value slots.
  { weight: 30, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 4, arbitrary: loneSurrogates },
  { weight: 4, arbitrary: oddNumbers },
  { weight: 4, arbitrary: protoObject },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: fc.constantFrom(DEEP_ARRAY, DEEP_OBJECT) },
);

const stackEntry = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('a'.repeat(10_000), '__proto__', 'echo', 'hold'),
  fc.integer().map(String),
);

/** Call stacks that are not an array of short strings, and some that are. */
const callStackText = fc.oneof(
  fc.array(stackEntry, { maxLength: 40 }).map((entries) => JSON.stringify(entries)),
  fc.constantFrom(
    JSON.stringify(Array.from({ length: 10_000 }, (_, i) => `tool${i}`)),
    '"echo"',
    '{"0":"echo","length":1}',
    '[["nested"]]',
    '[null,1,true]',
  ),
  valueText,
);

/** Next-tool directives: well-formed, malformed, looping, with hostile arguments. */
export const directiveText = fc.oneof(
  fc
    .constantFrom('echo', 'hold', 'reflect_next', 'diagnostics', 'missing', '', '../echo', 'a'.repeat(200))
    .map((tool) => `{"tool":${quote(tool)},"arguments":{}}`),
  fc.constantFrom(
    '{"tool":"echo","arguments":{"__proto__":{"polluted":true}}}',
    '{"tool":"reflect_next","arguments":{"next":{"tool":"reflect_next","arguments":{"next":{"tool":"echo"}}}}}',
    '{"tool":"echo","arguments":[1,2,3]}',
    '{"tool":["echo"]}',
    '{"__proto__":{"tool":"echo"}}',
    '"echo"',
  ),
  valueText,
);

const metaKeys = fc.constantFrom(
  'dev.sluice/callStack',
  'callStack',
  'dev.sluice/nextTool',
  'nextTool',
  'openai/nextTool',
  'progressToken',
  'traceparent',
  '__proto__',
  'constructor',
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/logLevel',
);

const metaEntry = fc.oneof(
  fc.tuple(fc.constantFrom('dev.sluice/callStack', 'callStack'), callStackText),
  fc.tuple(fc.constantFrom('dev.sluice/nextTool', 'nextTool', 'openai/nextTool'), directiveText),
  fc.tuple(fc.oneof(metaKeys, fc.string({ maxLength: 12 })), valueText),
);

/** A `_meta` text: hostile entries, with the 2026-07-28 envelope when `modern`. */
export function metaText(modern: boolean): fc.Arbitrary<string> {
  const envelope = Object.entries(ENVELOPE).map(([k, v]) => [k, JSON.stringify(v)] as const);
  return fc
    .tuple(fc.array(metaEntry, { maxLength: 5 }), fc.boolean())
    .map(([entries, dropEnvelope]) => objectText([...(modern && !dropEnvelope ? envelope : []), ...entries]));
}

const argumentsText = fc.oneof(
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom('__proto__', 'constructor', 'prototype', 'ms', 'next', 'key'),
          fc.string({ maxLength: 10 }),
        ),
        valueText,
      ),
      { maxLength: 5 },
    )
    .map(objectText),
  valueText,
);

/** A tool call, as text, with what it targets (for the request headers). */
export interface RequestText {
  readonly body: string;
  readonly method: string | undefined;
  readonly name: string | undefined;
}

const toolCall = (modern: boolean): fc.Arbitrary<RequestText> =>
  fc
    .record({
      tool: fc.constantFrom('echo', 'hold', 'reflect_next', 'diagnostics', 'missing_tool'),
      args: argumentsText,
      holdMs: fc.integer({ min: 0, max: 15 }),
      next: directiveText,
      key: fc.constantFrom('dev.sluice/nextTool', 'nextTool', 'openai/nextTool', '__proto__'),
      meta: metaText(modern),
      id: idText,
    })
    .map(({ tool, args, holdMs, next, key, meta, id }) => {
      const argumentText =
        tool === 'hold' ? `{"ms":${holdMs}}` : tool === 'reflect_next' ? `{"next":${next},"key":${quote(key)}}` : args;
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${quote(tool)},"arguments":${argumentText},"_meta":${meta}}}`;
      return { body, method: 'tools/call', name: tool };
    });

/** Ids: fine, unsafe, and not ids at all. */
export const idText = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 1_000_000 }).map(String) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }).map(quote) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('9007199254740993', '1e309', '-1', '1.5', 'null', '{}', '[]', 'true', quote('\ud800')),
  },
);

const otherMethod = (modern: boolean): fc.Arbitrary<RequestText> =>
  fc
    .record({
      method: fc.oneof(
        fc.constantFrom(
          'tools/list',
          'ping',
          'initialize',
          'server/discover',
          'resources/list',
          'prompts/get',
          'logging/setLevel',
          'unknown/method',
          'notifications/cancelled',
          '__proto__',
          'constructor',
        ),
        fc.string({ maxLength: 20 }),
      ),
      params: fc.oneof(
        metaText(modern).map((meta) => `{"_meta":${meta}}`),
        valueText,
      ),
      id: fc.option(idText, { nil: undefined }),
    })
    .map(({ method, params, id }) => ({
      body: `{"jsonrpc":"2.0",${id === undefined ? '' : `"id":${id},`}"method":${quote(method)},"params":${params}}`,
      method: /^[\x21-\x7e]+$/.test(method) ? method : undefined,
      name: undefined,
    }));

/** Messages that are not JSON-RPC requests: bad JSON, wrong shapes, batches. */
const malformed = (modern: boolean): fc.Arbitrary<RequestText> =>
  fc
    .oneof(
      fc.string({ maxLength: 200 }),
      fc.constantFrom(
        '',
        '{',
        '[',
        'null',
        '[]',
        '{}',
        '1',
        '"jsonrpc"',
        '{"jsonrpc":"2.0"}',
        '{"jsonrpc":"1.0","id":1,"method":"ping"}',
        '{"id":1,"method":"ping"}',
      ),
      fc.constantFrom(
        '{"jsonrpc":"2.0","id":1,"method":42}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}',
        '{"jsonrpc":"2.0","id":1,"result":{}}',
      ),
      fc
        .array(
          toolCall(modern).map((r) => r.body),
          { minLength: 1, maxLength: 3 },
        )
        .map((bodies) => `[${bodies.join(',')}]`),
      toolCall(modern).chain((r) =>
        fc.integer({ min: 1, max: Math.max(1, r.body.length - 1) }).map((cut) => r.body.slice(0, cut)),
      ),
    )
    .map((body) => ({ body, method: undefined, name: undefined }));

/** Every kind of request the harness sends, weighted towards ones that get past parsing. */
export function requestText(modern: boolean): fc.Arbitrary<RequestText> {
  return fc.oneof(
    { weight: 5, arbitrary: toolCall(modern) },
    { weight: 3, arbitrary: otherMethod(modern) },
    { weight: 2, arbitrary: malformed(modern) },
  );
}
