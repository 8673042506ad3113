// The files `sluice create plugin` writes. The versions of the dev tools are the workspace's catalog's
// (test/create.test.ts fails when they drift apart).

/** The names a plugin package's files use. */
export interface PluginNames {
  /** The npm package name, also the plugin's name (`definePlugin({ name })`). */
  readonly packageName: string;
  /** The folder it is written to by default: the name without its scope. */
  readonly folder: string;
  /** The factory's export, named in the config's `plugins.custom[].export`. */
  readonly factory: string;
  /** The prefix of its exported schema and error codes, `PascalCase`. */
  readonly pascal: string;
  /** The prefix of its error codes, `UPPER_SNAKE`. */
  readonly code: string;
  /** The version of @sluice/core the scaffold was written against. */
  readonly coreVersion: string;
}

/** Dev tools of the package, as the workspace pins them. */
export const SCAFFOLD_DEV_TOOLS = Object.freeze({
  // The test kit's client, and the SDK server package it serves the plugin's server with: peers of @sluice/testing.
  '@modelcontextprotocol/client': '^2.4.0',
  '@modelcontextprotocol/server': '^2.4.0',
  '@types/node': '^20.19.0',
  // The test kit captures logs through pino, an optional peer of @sluice/testing.
  pino: '^10.4.0',
  typescript: '~5.9.3',
  vitest: '~4.1.12',
});
export const SCAFFOLD_ZOD = '^4.2.0';

/** `>=X.Y.0 <X+1.0.0`, and `<1.0.0` while core is at 0.x: a core minor release must not force a major of the plugin. */
function corePeerRange(version: string): string {
  const [major = '0', minor = '0'] = version.split('.');
  return `>=${major}.${minor}.0 <${Number(major) + 1}.0.0`;
}

function packageJson(n: PluginNames): string {
  const manifest = {
    name: n.packageName,
    version: '0.1.0',
    description: 'A Sluice plugin',
    type: 'module',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    files: ['dist'],
    engines: { node: '>=20.11' },
    scripts: { build: 'tsc -p tsconfig.json', test: 'vitest run', prepack: 'npm run build' },
    peerDependencies: { '@sluice/core': corePeerRange(n.coreVersion) },
    dependencies: { zod: SCAFFOLD_ZOD },
    // The test kit is released with core, at core's version.
    devDependencies: {
      '@sluice/core': `^${n.coreVersion}`,
      '@sluice/testing': `^${n.coreVersion}`,
      ...SCAFFOLD_DEV_TOOLS,
    },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      declaration: true,
      outDir: 'dist',
      rootDir: 'src',
      types: ['node'],
      // The plugin's own code is checked against its dependencies' types; the dependencies' declaration files
      // themselves are not checked again (a build of about 4 CPU-s instead of about 17).
      skipLibCheck: true,
    },
    include: ['src'],
  },
  null,
  2,
)}\n`;

function index(n: PluginNames): string {
  return `import { z } from 'zod';
import { Stage, ToolSelectorListSchema, definePlugin, isToolCall, parseOptions, pluginOptions } from '@sluice/core';
import type { Plugin } from '@sluice/core';
import { CallGate } from './handler.js';

export { ${n.pascal}ErrorCode } from './handler.js';

const NAME = ${JSON.stringify(n.packageName)};
const VERSION = '0.1.0';

/**
 * The plugin's options. \`pluginOptions()\` adds \`mode\` (enforce, audit or off)
 * and refuses a key it does not name, so a misspelt option stops the gateway
 * at start instead of being dropped.
 */
export const ${n.pascal}Options = pluginOptions({
  /** Tools to refuse, by selector: \`"delete_*"\`, \`"files/*"\` (an upstream's), \`"!files/read_*"\`. */
  refuse: ToolSelectorListSchema.default([]),
  /** Why, as the caller reads it. */
  reason: z.string().min(1).max(500).default('the operator turned this tool off'),
});
export type ${n.pascal}Options = z.input<typeof ${n.pascal}Options>;

/** Refuses the tools its \`refuse\` selectors name; every other call runs. */
export function ${n.factory}(options: ${n.pascal}Options = {}): Plugin {
  const config = parseOptions(NAME, ${n.pascal}Options, options);
  return definePlugin({
    name: NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, logger }) {
      const gate = new CallGate(config.refuse, config.reason);
      // Before the tool or its upstream is reached; in audit mode a refusal becomes a log line.
      hooks.request.tap({ name: NAME, stage: Stage.FILTER, kinds: ['tools/call'] }, (ctx) =>
        isToolCall(ctx) ? gate.decide(ctx.tool) : undefined,
      );
      // After every call, with its outcome: log with fields and a named event, never to stdout.
      hooks.settled.tap({ name: NAME, stage: Stage.LAST }, (ctx, outcome) => {
        const fields = { event: ${JSON.stringify(`${n.folder}.call`)}, tool: ctx.tool.name, status: outcome.status };
        logger.debug(fields, 'call ended');
      });
    },
  });
}

export default ${n.factory};
`;
}

function handler(n: PluginNames): string {
  return `import { refusal, selectTools } from '@sluice/core';
import type { CallToolResult, ToolMatcher, ToolSubject } from '@sluice/core';

/** Every code this plugin raises. */
export const ${n.pascal}ErrorCode = Object.freeze({
  /** The tool is one the operator refused. */
  REFUSED: ${JSON.stringify(`${n.code}_REFUSED`)},
} as const);

/** The plugin's decision on each call, kept apart from the hooks so it is easy to test and to grow. */
export class CallGate {
  private readonly refused: ToolMatcher;

  constructor(
    selectors: readonly string[],
    private readonly reason: string,
  ) {
    // Compiled once, matched on every call.
    this.refused = selectTools(selectors);
  }

  /** A refusal the caller (a model) can read, or undefined to let the call run. */
  decide(tool: ToolSubject): CallToolResult | undefined {
    if (!this.refused(tool)) return undefined;
    return refusal({
      code: ${n.pascal}ErrorCode.REFUSED,
      message: \`The tool \${tool.name} is refused: \${this.reason}.\`,
      suggestion: 'Use another tool, or ask the operator.',
    });
  }
}
`;
}

function test(n: PluginNames): string {
  return `import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestKit, errorOf, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { ${n.pascal}ErrorCode, ${n.factory} } from '../src/index.js';

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};
const dropTable = { ...echo, name: 'drop_table' };

describe(${JSON.stringify(n.packageName)}, () => {
  let kit: TestKit | undefined;
  afterEach(async () => kit?.close());

  it('refuses the tools its selectors name and runs the others', async () => {
    kit = await createTestKit({ plugins: [${n.factory}({ refuse: ['drop_*'] })], tools: [echo, dropTable] });
    expect(textOf(await kit.call('echo', { text: 'hello' }))).toBe('hello');
    const refused = await kit.call('drop_table', { text: 'users' });
    expect(errorOf(refused)?.code).toBe(${n.pascal}ErrorCode.REFUSED);
  });

  it('lets every call run in audit mode', async () => {
    kit = await createTestKit({ plugins: [${n.factory}({ refuse: ['*'], mode: 'audit' })], tools: [echo] });
    expect(textOf(await kit.call('echo', { text: 'still runs' }))).toBe('still runs');
  });

  it('refuses a misspelt option at construction', () => {
    expect(() => ${n.factory}({ refuze: ['echo'] } as never)).toThrow(/refuze/);
  });
});
`;
}

const GITIGNORE = `node_modules/
dist/
*.tgz
`;

function readme(n: PluginNames): string {
  return `# ${n.packageName}

A [Sluice](https://github.com/sluice-dev/sluice) plugin, written by \`sluice create plugin\`. It refuses the
tools its \`refuse\` selectors name and lets every other call run; change \`src/handler.ts\` to make it yours.

\`\`\`sh
npm install && npm test && npm pack   # npm pack builds dist/ first (prepack)
\`\`\`

Install the tarball beside \`@sluice/gateway\` and name the plugin in \`sluice.config.json\`:

\`\`\`json
{ "plugins": { "custom": [{ "module": "${n.packageName}", "export": "${n.factory}", "options": { "refuse": ["delete_*"] } }] } }
\`\`\`

| option | default | what it does |
|---|---|---|
| \`refuse\` | \`[]\` | tool selectors to refuse (\`"delete_*"\`, \`"files/*"\`) |
| \`reason\` | \`"the operator turned this tool off"\` | why, as the caller reads it |
| \`mode\` | \`"enforce"\` | \`audit\` logs what it would refuse and lets the call run; \`off\` |
`;
}

/** The files of a new plugin package, by path inside its folder. */
export function pluginFiles(n: PluginNames): Record<string, string> {
  return {
    'package.json': packageJson(n),
    'tsconfig.json': TSCONFIG,
    '.gitignore': GITIGNORE,
    'README.md': readme(n),
    'src/index.ts': index(n),
    'src/handler.ts': handler(n),
    'test/plugin.test.ts': test(n),
  };
}
