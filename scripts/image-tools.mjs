// Shared by the scripts that check the image without a Docker daemon (check-image.mjs, check-container.mjs):
// deploy/Dockerfile read as instructions, and a free loopback port.
import { createServer } from 'node:net';

/** The Dockerfile's instructions, by stage, continuation lines joined. */
export function parseDockerfile(text) {
  const stages = [];
  const joined = text.replace(/\\\n/g, ' ');
  for (const raw of joined.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [, op, rest] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    if (op === undefined) continue;
    if (op.toUpperCase() === 'FROM') {
      stages.push({ from: rest, steps: [] });
      continue;
    }
    stages.at(-1)?.steps.push({ op: op.toUpperCase(), args: rest });
  }
  return stages;
}

/** A RUN, CMD or ENTRYPOINT argument as the argv Docker runs: the exec form, or the shell form through sh -c. */
export const execForm = (args) => (args.startsWith('[') ? JSON.parse(args) : ['/bin/sh', '-c', args]);

/** The runtime stage's pieces: ENV (in order), USER, ENTRYPOINT + CMD, the HEALTHCHECK command. */
export function runtimeOf(stage) {
  const env = {};
  for (const { op, args } of stage.steps) {
    if (op !== 'ENV') continue;
    const [, name, value] = /^(\S+?)[=\s](.*)$/.exec(args) ?? [];
    if (name) env[name] = value;
  }
  const last = (op) => stage.steps.filter((s) => s.op === op).at(-1)?.args;
  const healthcheck = /CMD\s+(\[.*\])$/.exec(last('HEALTHCHECK') ?? '')?.[1];
  return {
    env,
    user: last('USER'),
    workdir: last('WORKDIR'),
    command: [...execForm(last('ENTRYPOINT') ?? '[]'), ...execForm(last('CMD') ?? '[]')],
    healthcheck: healthcheck === undefined ? [] : execForm(healthcheck),
  };
}

/** A port nothing listens on now, on loopback. */
export function freePort() {
  return new Promise((ok, ko) => {
    const server = createServer();
    server.once('error', ko);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** `fail` (prints why and exits 1) and `step` (prints what was done, with the seconds since start) of a check named `name`. */
export function progress(name) {
  const started = Date.now();
  return {
    fail(message) {
      console.error(`${name}: FAILED: ${message}`);
      process.exit(1);
    },
    step(message) {
      console.error(`${name}: [${((Date.now() - started) / 1000).toFixed(1)} s] ${message}`);
    },
  };
}
