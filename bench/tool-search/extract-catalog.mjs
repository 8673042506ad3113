// Builds catalog.json: real tool definitions of public MCP servers, each server
// citing the repository and path its definitions were read from. Needs local
// git mirrors of github/github-mcp-server and docker/mcp-registry (paths in
// GITHUB_MCP and MCP_REGISTRY) and the published @modelcontextprotocol
// reference servers from the workspace. Not part of `pnpm bench`: run once,
// commit the result. Usage: node bench/tool-search/extract-catalog.mjs
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const GITHUB_MCP = process.env.GITHUB_MCP ?? '/work/.mirror/github+github-mcp-server/repo';
const MCP_REGISTRY = process.env.MCP_REGISTRY ?? '/work/.mirror/docker+mcp-registry/repo';

const git = (dir, ...args) =>
  execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const headOf = (dir) => git(dir, 'rev-parse', 'HEAD').trim();

function githubServer() {
  const commit = headOf(GITHUB_MCP);
  const folder = 'pkg/github/__toolsnaps__';
  const files = git(GITHUB_MCP, 'ls-tree', '--name-only', 'HEAD', `${folder}/`)
    .split('\n')
    .filter((f) => f.endsWith('.snap'));
  const tools = files.map((file) => {
    const snap = JSON.parse(git(GITHUB_MCP, 'show', `HEAD:${file}`));
    return pick(snap);
  });
  return {
    server: 'github',
    source: { repository: 'github/github-mcp-server', path: `${folder}/*.snap`, commit },
    tools,
  };
}

/** Servers of the Docker MCP registry whose tools.json lists their tools, chosen for breadth of domain. */
const REGISTRY_SERVERS = [
  'stripe-remote',
  'kubectl-mcp-server',
  'sonarqube',
  'buildkite',
  'sqlite-mcp-server',
  'notion-remote',
  'webflow-remote',
  'okta-mcp-server',
  'keboola-mcp',
  'neo4j',
  'gmail-mcp',
  'sentry-remote',
  'microsoft-learn',
  'zerodha-kite',
  'maestro-mcp-server',
  'database-server',
  'alfresco',
  'simplechecklist',
  'explorium',
];

function registryServer(name) {
  const commit = headOf(MCP_REGISTRY);
  const path = `servers/${name}/tools.json`;
  const listed = JSON.parse(git(MCP_REGISTRY, 'show', `HEAD:${path}`));
  const yaml = git(MCP_REGISTRY, 'show', `HEAD:servers/${name}/server.yaml`);
  const project = /^\s*project:\s*(\S+)/m.exec(yaml)?.[1];
  const tools = listed.map((t) => {
    const properties = {};
    const required = [];
    for (const arg of t.arguments ?? []) {
      properties[arg.name] = { type: arg.type ?? 'string', ...(arg.desc ? { description: arg.desc } : {}) };
      if (!arg.optional) required.push(arg.name);
    }
    return pick({ name: t.name, description: t.description, inputSchema: { type: 'object', properties, required } });
  });
  return {
    server: name.replace(/-(remote|mcp-server|mcp|server)$/, ''),
    source: { repository: 'docker/mcp-registry', path, commit, ...(project ? { project } : {}) },
    tools,
  };
}

/** The reference servers published from modelcontextprotocol/servers, asked for their tools over stdio. */
async function referenceServer(pkg, server, path) {
  const core = createRequire(join(root, 'packages/core/package.json'));
  const { Client } = await import(core.resolve('@modelcontextprotocol/client'));
  const { StdioClientTransport } = await import(core.resolve('@modelcontextprotocol/client/stdio'));
  const manifest = core.resolve(`${pkg}/package.json`);
  const { version, bin } = JSON.parse(execFileSync('cat', [manifest], { encoding: 'utf8' }));
  const entry = join(dirname(manifest), Object.values(bin)[0]);
  const client = new Client({ name: 'catalog-extract', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry], stderr: 'ignore' }));
  const { tools } = await client.listTools();
  await client.close();
  return {
    server,
    source: { repository: 'modelcontextprotocol/servers', path, package: `${pkg}@${version}` },
    tools: tools.map(pick),
  };
}

function pick(tool) {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : tool.annotations?.title ? { title: tool.annotations.title } : {}),
    description: tool.description ?? '',
    inputSchema: tool.inputSchema ?? { type: 'object', properties: {} },
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
  };
}

const servers = [
  githubServer(),
  ...REGISTRY_SERVERS.map(registryServer),
  await referenceServer('@modelcontextprotocol/server-everything', 'everything', 'src/everything/tools'),
  await referenceServer('@modelcontextprotocol/server-memory', 'memory', 'src/memory/index.ts'),
];
const count = servers.reduce((n, s) => n + s.tools.length, 0);
writeFileSync(join(here, 'catalog.json'), `${JSON.stringify({ servers }, null, 1)}\n`);
console.log(`${servers.length} servers, ${count} tools`);
