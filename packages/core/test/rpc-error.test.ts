import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InMemoryTransport,
  ProtocolError,
  ResourceNotFoundError,
  SdkError,
  SdkErrorCode,
  Server,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import { Client, ProtocolError as ClientProtocolError } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { CoreErrorCode, RpcCode, SluiceError, Stage, createServer, definePlugin, invalidParams } from '@sluice/core';
import { captureLogger } from '../../testing/src/index.js';
import { RpcError, isRpcError, toProtocolError } from '@sluice/core/internal';
import { resourceNotFound } from '../src/rpc-error.js';
import { rpcFailure } from './fixtures/upstream-helpers.js';
import { SERVER_SDK_PACKAGE, isMissing, serverSdkMissing } from '../src/server-sdk-loader.js';

/** A second copy of the module, as a second copy of @sluice/core in node_modules would load it. */
async function anotherCopy(): Promise<typeof RpcError> {
  const specifier: string = '../src/rpc-error.ts?another-copy';
  return ((await import(specifier)) as { RpcError: typeof RpcError }).RpcError;
}

describe('RpcError', () => {
  it('carries a JSON-RPC code, a message and data, and is an instance across copies of core', async () => {
    const error = new RpcError(-32600, 'SEALED: not for this caller', { code: 'SEALED' });
    expect(error).toBeInstanceOf(Error);
    expect({ code: error.code, message: error.message, data: error.data }).toEqual({
      code: -32600,
      message: 'SEALED: not for this caller',
      data: { code: 'SEALED' },
    });
    const Other = await anotherCopy();
    expect(Other).not.toBe(RpcError);
    expect(new Other(-32602, 'x') instanceof RpcError).toBe(true);
    expect(error instanceof Other).toBe(true);
    expect({ code: -32600, message: 'x', name: 'RpcError' } instanceof RpcError).toBe(false);
    expect(new SluiceError('X', 'x') instanceof RpcError).toBe(false);
  });
});

describe('isRpcError', () => {
  it('recognises core’s errors and the SDK’s protocol errors of either package, by brand', () => {
    expect(isRpcError(new RpcError(-32603, 'Internal error'))).toBe(true);
    expect(isRpcError(new ProtocolError(-32600, 'refused'))).toBe(true);
    expect(isRpcError(new ClientProtocolError(-32600, 'refused'))).toBe(true);
    expect(isRpcError(new ResourceNotFoundError('docs://x'))).toBe(true);
    expect(isRpcError(new UrlElicitationRequiredError([], 'connect first'))).toBe(true);
  });

  it('refuses what only looks like one: a coded error, an SDK error of another kind, a plain object', () => {
    expect(isRpcError(new SdkError(SdkErrorCode.RequestTimeout, 'timed out'))).toBe(false);
    expect(isRpcError(new SluiceError(CoreErrorCode.INVALID_STATE, 'x'))).toBe(false);
    expect(isRpcError(Object.assign(new Error('http'), { code: 404 }))).toBe(false);
    expect(isRpcError({ code: -32600, message: 'x', data: {} })).toBe(false);
    const forged = Object.assign(new Error('x'), { code: -32600 });
    Object.defineProperty(forged, Symbol.for('mcp.sdk.errorBrands'), { value: 'mcp.ProtocolError' });
    expect(isRpcError(forged)).toBe(false);
    for (const value of [null, undefined, 0, 'error', Symbol('x')]) expect(isRpcError(value)).toBe(false);
  });
});

describe('toProtocolError', () => {
  it('passes a protocol error on as it is, the SDK’s or core’s', () => {
    const sdk = new ProtocolError(-32042, 'connect first', { elicitations: [] });
    expect(toProtocolError(sdk)).toBe(sdk);
    const ours = new RpcError(-32602, 'x');
    expect(toProtocolError(ours)).toBe(ours);
  });

  it('relays an upstream’s own error, and its connect request, as the upstream sent them', () => {
    const cause = new ClientProtocolError(-32021, 'missing capability', { requiredCapabilities: {} });
    const relayed = new SluiceError(CoreErrorCode.UPSTREAM_ERROR, 'x', { rpcCode: -32021, cause });
    expect(toProtocolError(relayed)).toBe(cause);
    const consent = new ProtocolError(-32042, 'connect', { elicitations: [] });
    expect(toProtocolError(new SluiceError(CoreErrorCode.UPSTREAM_CONNECT_REQUIRED, 'x', { cause: consent }))).toBe(
      consent,
    );
    // A cause that is no JSON-RPC error is not relayed.
    expect(
      toProtocolError(new SluiceError(CoreErrorCode.UPSTREAM_ERROR, 'gone', { cause: new Error('socket') })),
    ).toMatchObject({ code: RpcCode.INTERNAL_ERROR, message: 'gone', data: { code: CoreErrorCode.UPSTREAM_ERROR } });
  });

  it('names the failed plugin and hook, never what the plugin said', () => {
    const failed = new SluiceError(CoreErrorCode.PLUGIN_FAILED, 'Plugin "p" failed in hook "preCall": token hunter2', {
      plugin: 'p',
      hook: 'preCall',
      rpcCode: RpcCode.INTERNAL_ERROR,
    });
    const answer = toProtocolError(failed);
    expect(answer).toBeInstanceOf(RpcError);
    expect([answer.code, answer.message, answer.data]).toEqual([
      -32603,
      'Internal error in plugin "p" (preCall)',
      { code: 'PLUGIN_FAILED' },
    ]);
  });

  it('answers invalid parameters with -32602 and anything unknown with a bare internal error', () => {
    const invalid = toProtocolError(invalidParams('city must name a place'));
    expect([invalid.code, invalid.message, invalid.data]).toEqual([
      -32602,
      'city must name a place',
      { code: 'INVALID_PARAMS' },
    ]);
    const unknown = toProtocolError(new Error('stack details'));
    expect([unknown.code, unknown.message, unknown.data]).toEqual([-32603, 'Internal error', undefined]);
  });
});

describe('what a client receives', () => {
  /** The error a real SDK client gets when a handler of a real SDK server throws `error`. */
  async function received(error: Error): Promise<{ code: unknown; message: unknown; data: unknown }> {
    const server = new Server({ name: 's', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', () => Promise.reject(error));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(a);
    try {
      const thrown = (await client.listTools().then(
        () => ({}),
        (e: unknown) => e,
      )) as { code?: unknown; message?: unknown; data?: unknown };
      return { code: thrown.code, message: thrown.message, data: thrown.data };
    } finally {
      await client.close();
    }
  }

  it('is the same for core’s error as for the SDK’s with the same code, message and data', async () => {
    const json = fc.jsonValue({ maxDepth: 2 });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(-32600, -32601, -32602, -32603, -32042, -32000),
        fc.string({ maxLength: 40 }),
        fc.option(fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 3 }), { nil: undefined }),
        async (code, message, data) => {
          expect(await received(new RpcError(code, message, data))).toEqual(
            await received(new ProtocolError(code, message, data)),
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it('is the SDK’s resource-not-found error for core’s', async () => {
    const ours = await received(resourceNotFound('docs://hidden'));
    expect(ours).toEqual(await received(new ResourceNotFoundError('docs://hidden')));
    expect(ours).toEqual({
      code: -32602,
      message: 'Resource not found: docs://hidden',
      data: { uri: 'docs://hidden' },
    });
  });
});

describe('what a client of a Sluice server receives when a plugin fails a call', () => {
  it('is the code, message and data it always got', async () => {
    const strict = definePlugin({
      name: 'strict',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.preCall.tap({ name: 'strict', stage: Stage.RISK }, (ctx) => {
          if (ctx.arguments.city === '') throw invalidParams('city must name a place');
          if (ctx.arguments.city === 'Boom') throw new Error('the secret token is hunter2');
          return undefined;
        }),
    });
    const server = createServer({ name: 's', version: '1', plugins: [strict], logger: captureLogger().logger });
    server.tool({
      name: 'forecast',
      inputSchema: z.object({ city: z.string() }),
      handler: ({ city }) => ({ content: [{ type: 'text', text: `sunny in ${city}` }] }),
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(a);
    const failure = (name: string, city: string) => rpcFailure(client.callTool({ name, arguments: { city } }));
    expect(await failure('forecast', '')).toEqual({
      code: -32602,
      message: 'city must name a place',
      data: { code: 'INVALID_PARAMS' },
    });
    expect(await failure('forecast', 'Boom')).toEqual({
      code: -32603,
      message: 'Internal error in plugin "strict" (preCall)',
      data: { code: 'PLUGIN_FAILED' },
    });
    expect(await failure('nowhere', 'Oslo')).toEqual({
      code: -32602,
      message: 'Unknown tool: "nowhere"',
      data: { code: 'UNKNOWN_TOOL' },
    });
    await client.close();
    await server.close();
  });
});

describe('a project without the SDK’s server package', () => {
  /** What Node's ESM loader (or its CommonJS require) throws for a package a fresh folder cannot resolve. */
  function importError(specifier: string, loader: 'esm' | 'cjs' = 'esm'): { code: string; message: string } {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-missing-'));
    const load =
      loader === 'esm'
        ? `import(${JSON.stringify(specifier)})`
        : `(async () => require(${JSON.stringify(specifier)}))()`;
    try {
      const run = spawnSync(
        process.execPath,
        [
          ...(loader === 'esm' ? ['--input-type=module'] : []),
          '-e',
          `${load}.then(() => console.log('{}'), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`,
        ],
        // Nothing inherited may point the child at node_modules (NODE_PATH, NODE_OPTIONS).
        { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH } },
      );
      return JSON.parse(run.stdout) as { code: string; message: string };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('is told apart from any other failed import, in ESM and CommonJS', () => {
    const esm = importError(SERVER_SDK_PACKAGE);
    expect(esm.code).toBe('ERR_MODULE_NOT_FOUND');
    expect(isMissing(esm, SERVER_SDK_PACKAGE)).toBe(true);
    const cjs = importError(SERVER_SDK_PACKAGE, 'cjs');
    expect(cjs.code).toBe('MODULE_NOT_FOUND');
    expect(isMissing(cjs, SERVER_SDK_PACKAGE)).toBe(true);
    // Another package missing is not this one; a subpath of this one, absent, names the package.
    expect(isMissing(importError('@modelcontextprotocol/server-nope'), SERVER_SDK_PACKAGE)).toBe(false);
    expect(isMissing(importError('@modelcontextprotocol/server-nope', 'cjs'), SERVER_SDK_PACKAGE)).toBe(false);
    expect(isMissing(importError(`${SERVER_SDK_PACKAGE}/stdio`), SERVER_SDK_PACKAGE)).toBe(true);
    expect(isMissing(new Error(`'${SERVER_SDK_PACKAGE}' failed`), SERVER_SDK_PACKAGE)).toBe(false);
  });

  it('gets an error naming the package to install', () => {
    const error = serverSdkMissing(new Error('cause'));
    expect(error.code).toBe(CoreErrorCode.INVALID_STATE);
    expect(error.message).toContain('npm install @modelcontextprotocol/server');
  });
});
