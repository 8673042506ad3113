// The example in packages/testing/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import { expect } from 'vitest';
import type { Plugin, ToolDefinition } from '@sluice/core';

declare function myPlugin(): Plugin;
declare const myTool: ToolDefinition;

// #region testing
import { createTestKit, errorOf } from '@sluice/testing';

const kit = await createTestKit({ plugins: [myPlugin()], tools: [myTool] });
const result = await kit.call('my_tool', { id: 1 });
expect(errorOf(result)?.code).toBe('MY_CODE');
expect(kit.logs.events('my.event')).toHaveLength(1);
await kit.close();
// #endregion testing
