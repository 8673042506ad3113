import type { Logger, SluiceServer } from '@sluice/core';
import { createServer } from '@sluice/core';
import { registerClientRequestTools } from './client-requests.js';
import { registerContentTools } from './content-tools.js';
import { registerInputRequiredTools } from './input-required-tools.js';
import { registerListChangeTool, registerPromptChangeTool } from './list-changes.js';
import type { DeploymentOptions } from './plugins.js';
import { deploymentPlugins } from './plugins.js';
import { registerPrompts } from './prompts.js';
import { registerResources } from './resources.js';

export interface ConformanceServerOptions extends DeploymentOptions {
  readonly logger?: Logger;
}

/**
 * The server the official MCP conformance suite is run against: the tools,
 * resources and prompts its scenarios expect, behind every Sluice plugin.
 */
export function buildConformanceServer(options: ConformanceServerOptions = {}): SluiceServer {
  const server = createServer({
    name: 'sluice-conformance',
    version: '1.0.0',
    plugins: deploymentPlugins(options),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  registerContentTools(server);
  registerClientRequestTools(server);
  registerInputRequiredTools(server);
  registerListChangeTool(server);
  registerPromptChangeTool(server);
  server.extendSdk((mcp) => {
    // Tools log through ctx.mcp.mcpReq.log, which sends only when the capability is declared.
    mcp.server.registerCapabilities({ logging: {} });
    registerResources(mcp);
    registerPrompts(mcp);
  });
  return server;
}
