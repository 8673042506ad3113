import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { SluiceError, createDefaultLogger, messageOf } from '@sluice/core';
import { checkGateway } from './check.js';
import { formatCheckReport } from './check-format.js';
import { parseCommandLine } from './cli-args.js';
import type { Command } from './cli-args.js';
import { loadConfigFile } from './config-file.js';
import { GatewayErrorCode, isConfigError } from './errors.js';
import { loadCustomPlugins } from './custom-plugins.js';
import { createGateway } from './gateway.js';
import type { Environment } from './interpolate.js';
import { gatewayJsonSchema } from './json-schema.js';
import { runInitCommand } from './init-command.js';
import { runCreateCommand } from './create-command.js';
import { runLedgerCommand } from './ledger-command.js';
import { runApprovalsCommand } from './approvals-command.js';
import { runCredentialsCommand } from './credentials-command.js';
import { runAuditCommand } from './audit-command.js';
import { runUntilStopped } from './serve.js';
import { USAGE } from './usage.js';
import { VERSION } from './version.js';

export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Environment;
}

export const ExitCode = Object.freeze({ OK: 0, FAILURE: 1, USAGE: 2 } as const);

/**
 * The `sluice` command. Resolves with the exit code: 0 ok, 1 a runtime
 * failure, 2 bad usage or a bad config. Problems are one readable message
 * on stderr, never a stack trace.
 */
export async function main(
  argv: readonly string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    io.stderr.write(`sluice: ${messageOf(error)}\n\n${USAGE}`);
    return ExitCode.USAGE;
  }
  try {
    return await run(command, io);
  } catch (error) {
    io.stderr.write(`sluice: ${messageOf(error)}\n`);
    return isConfigError(error) ? ExitCode.USAGE : ExitCode.FAILURE;
  }
}

async function run(command: Command, io: CliIo): Promise<number> {
  switch (command.kind) {
    case 'help':
      io.stdout.write(USAGE);
      return ExitCode.OK;
    case 'version':
      io.stdout.write(`${VERSION}\n`);
      return ExitCode.OK;
    case 'schema': {
      const text = `${JSON.stringify(gatewayJsonSchema(), null, 2)}\n`;
      if (command.out === undefined) {
        io.stdout.write(text);
        return ExitCode.OK;
      }
      await writeFile(command.out, text);
      io.stdout.write(`wrote ${resolve(command.out)}: point a config's "$schema" at it\n`);
      return ExitCode.OK;
    }
    case 'init':
      io.stdout.write(await runInitCommand(command.config, command.force));
      return ExitCode.OK;
    case 'create':
      io.stdout.write(await runCreateCommand(command.what, command.name, command.dir));
      return ExitCode.OK;
    case 'check':
      return check(command.config, command.json, io);
    case 'serve':
      return serve(command, io);
    case 'ledger': {
      const { config } = await loadConfigFile(command.config, io.env);
      await runLedgerCommand(command, config, io.env.SLUICE_ADMIN_KEY, io.stdout);
      return ExitCode.OK;
    }
    case 'approvals': {
      const { config } = await loadConfigFile(command.config, io.env);
      await runApprovalsCommand(command, config, io.env.SLUICE_ADMIN_KEY, io.stdout);
      return ExitCode.OK;
    }
    case 'credentials': {
      const { config } = await loadConfigFile(command.config, io.env);
      await runCredentialsCommand(command, config, io.env.SLUICE_ADMIN_KEY, io.stdout);
      return ExitCode.OK;
    }
    case 'audit': {
      const { config } = await loadConfigFile(command.config, io.env);
      const intact = await runAuditCommand(command, config, io.env.SLUICE_ADMIN_KEY, io.stdout);
      return intact ? ExitCode.OK : ExitCode.FAILURE;
    }
  }
}

async function check(file: string, json: boolean, io: CliIo): Promise<number> {
  const loaded = await loadConfigFile(file, io.env);
  const logger = createDefaultLogger('sluice-check');
  // The report says what went wrong with each upstream; routine log lines would only bury it.
  logger.level =
    loaded.config.logLevel === 'debug' || loaded.config.logLevel === 'trace' ? loaded.config.logLevel : 'error';
  const custom = await loadCustomPlugins(loaded.config, loaded.baseDir);
  const report = await checkGateway(loaded.config, logger, { plugins: custom });
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatCheckReport(report, loaded.file));
  return report.healthy ? ExitCode.OK : ExitCode.FAILURE;
}

async function serve(command: Extract<Command, { kind: 'serve' }>, io: CliIo): Promise<number> {
  const loaded = await loadConfigFile(command.config, io.env);
  const { baseDir } = loaded;
  const config = {
    ...loaded.config,
    logLevel: command.logLevel ?? loaded.config.logLevel,
    logFormat: command.logFormat ?? loaded.config.logFormat,
  };
  const custom = await loadCustomPlugins(config, baseDir);
  const gateway = createGateway(config, { plugins: custom.map((c) => c.plugin) });
  const started = gateway.start();
  const stopped = runUntilStopped(gateway, started);
  try {
    await started;
  } catch (error) {
    const failure = new SluiceError(
      GatewayErrorCode.START_FAILED,
      `the gateway could not start: ${startFailure(error, config.listen.http)}`,
      { cause: error },
    );
    gateway.logger.error(
      { event: 'gateway.start_failed', code: failure.code, err: error },
      `the gateway could not start: ${messageOf(error)}`,
    );
    await gateway.close().catch(() => {});
    throw failure;
  }
  return stopped;
}

function startFailure(error: unknown, http: { host: string; port: number } | undefined): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (http && code === 'EADDRINUSE') return `${http.host}:${http.port} is already in use`;
  if (http && code === 'EACCES') return `no permission to listen on ${http.host}:${http.port}`;
  return messageOf(error);
}
