// The declarations a model reads must be valid TypeScript: generate them for the demo gateway's tools and compile them.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import type { ImportOptions, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { codeMode } from '@sluice/plugin-code-mode';
import '@sluice/upstream';

const DEMO = fileURLToPath(new URL('../../../examples/gateway/', import.meta.url));
interface DemoConfig {
  upstreams: (Omit<ImportOptions, 'connection'> & { connection: { command: string; args: string[] } })[];
}
const config = JSON.parse(readFileSync(join(DEMO, 'sluice.config.json'), 'utf8')) as DemoConfig;

/** The demo gateway's upstreams as its config file describes them, run from its folder. */
async function demoServer(binding: 'server' | 'tool'): Promise<SluiceServer> {
  const server = createServer({
    name: 'demo',
    version: '1',
    logger: captureLogger().logger,
    plugins: [codeMode({ binding })],
  });
  for (const upstream of config.upstreams) {
    const { command, args } = upstream.connection;
    const result = await server.import({
      ...upstream,
      connection: {
        type: 'stdio',
        command: command === 'node' ? process.execPath : command,
        args: args.map((arg) => (arg.endsWith('.js') || arg.endsWith('.mjs') ? join(DEMO, arg) : arg)),
        cwd: DEMO,
      },
    });
    expect(result.imported.length, upstream.name).toBeGreaterThan(0);
  }
  return server;
}

/** Writes every binding file into a fresh folder; returns the folder and the paths. */
async function writeBindings(server: SluiceServer): Promise<{ dir: string; files: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bindings-'));
  const listed = (await server.call('list_tool_files')).structuredContent as { files: string[] };
  for (const path of listed.files) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, textOf(await server.call('read_tool_file', { path })));
  }
  return { dir, files: listed.files.map((p) => join(dir, p)) };
}

/** Type-checks the files with the TypeScript compiler; returns the diagnostics as text. */
function typeCheck(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
    noUnusedLocals: false,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

// Calls as a model would write them, typed against the declarations.
const USAGE = `
async function usage(): Promise<void> {
  const echoed: ToolText = await everything.echo({ message: 'hi' });
  const sum = await everything.get_sum({ a: 1, b: 2 });
  const account = await desk.check_account({ customerId: 'c-1001' });
  console.log(echoed, sum, account);
  try { await callTool('desk_open_ticket', {}); } catch (e) { if (e instanceof ToolError) console.log(e.code); }
}
export {};
`;

describe('the declarations of the demo gateway’s tools', () => {
  const dirs: string[] = [];
  let servers: SluiceServer[] = [];
  beforeAll(async () => {
    servers = await Promise.all([demoServer('server'), demoServer('tool')]);
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each([
    ['server', 0],
    ['tool', 1],
  ] as const)('compile with tsc at the %s binding level, and type the calls a model writes', async (_level, index) => {
    const { dir, files } = await writeBindings(servers[index]!);
    dirs.push(dir);
    expect(files.length).toBeGreaterThanOrEqual(3);
    const usage = join(dir, 'usage.ts');
    writeFileSync(usage, USAGE);
    expect(typeCheck([...files, usage])).toEqual([]);
  });

  it('reject a call with the wrong arguments, so the types say something', async () => {
    const { dir, files } = await writeBindings(servers[0]!);
    dirs.push(dir);
    const wrong = join(dir, 'wrong.ts');
    writeFileSync(wrong, `async function wrong() { await everything.get_sum({ a: 'one', b: 2 }); }\nexport {};\n`);
    const errors = typeCheck([...files, wrong]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/wrong\.ts: Type 'string' is not assignable to type 'number'/);
  });
});
