import { writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { GatewayErrorCode, configError } from './errors.js';
import { gatewayJsonSchema } from './json-schema.js';

/**
 * The starter config `sluice init` writes: loopback (or `SLUICE_HOST`, which
 * the container image sets to 0.0.0.0), an API key from the environment, no
 * upstream yet.
 */
export function starterConfig(schemaFile: string): Record<string, unknown> {
  return {
    $schema: `./${schemaFile}`,
    name: 'sluice-gateway',
    listen: {
      http: {
        host: '${SLUICE_HOST:-127.0.0.1}',
        port: 3000,
        auth: { type: 'apiKeys', keys: [{ name: 'local', key: '${SLUICE_API_KEY}' }] },
      },
    },
    upstreams: [],
    plugins: {},
  };
}

/** Where to go next, printed after the files are written. */
function nextSteps(config: string): string {
  return `Next:
  1. Set the API key clients will send (32 random bytes: a guessable key is refused while others guess):
       export SLUICE_API_KEY=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")
  2. Add your MCP servers to "upstreams", for example:
       { "name": "files", "connection": { "type": "stdio", "command": "npx",
         "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/files"] } }
  3. sluice check --config ${config}     (imports every upstream and lists the tools)
  4. sluice serve --config ${config}     (clients connect to http://127.0.0.1:3000/mcp
                                          with "Authorization: Bearer $SLUICE_API_KEY")
`;
}

/**
 * `sluice init`: writes a starter config and its JSON Schema beside it (the
 * config's `$schema` names it, so an editor completes and checks every key).
 * An existing file is kept unless `force`.
 */
export async function runInitCommand(path: string, force: boolean): Promise<string> {
  const file = resolve(path);
  const schemaFile = `${basename(file).replace(/\.json$/, '')}.schema.json`;
  const schemaPath = join(dirname(file), schemaFile);
  const flag = force ? 'w' : 'wx';
  try {
    await writeFile(file, `${JSON.stringify(starterConfig(schemaFile), null, 2)}\n`, { flag });
  } catch (error) {
    if ((error as NodeJS.ErrnoException | null)?.code !== 'EEXIST') throw error;
    throw configError(GatewayErrorCode.USAGE, `${file} already exists; keep it, or overwrite it with --force`);
  }
  await writeFile(schemaPath, `${JSON.stringify(gatewayJsonSchema(), null, 2)}\n`);
  return `wrote ${file} and ${schemaPath}\n${nextSteps(path)}`;
}
