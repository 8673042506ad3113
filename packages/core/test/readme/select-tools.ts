// The example in packages/core/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import type { SluiceTool } from '@sluice/core';

declare const tool: SluiceTool;
/** What the tool's own policy says, if anything. */
declare const ownLimit: number | undefined;

// #region select-tools
import { ToolSelectorListSchema, ToolSettings, selectTools } from '@sluice/core';
import { z } from 'zod';

const Options = z.object({ tools: ToolSelectorListSchema, limits: z.record(z.string(), z.number()) });
const options = Options.parse({ tools: ['crm.*', '!crm.delete_*', 'github/search_*'], limits: { 'crm.*': 4 } });

const followed = selectTools(options.tools); // compile once
const names = ['crm.find', 'crm.delete_all', 'search'].filter((name) => followed(name)); // ['crm.find']
const fromGithub = followed(tool); // a SluiceTool is a subject: `github/` reads tool.source

const limits = new ToolSettings(options.limits, { ignoreCase: true });
// The tool's own policy first, then its exact name, then the first selector that selects it, then the default.
const limit = limits.resolve(tool, ownLimit, 1);
// #endregion select-tools
export { fromGithub, limit, names };
