// The example in packages/core/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import type { Plugin, SluiceTool } from '@sluice/core';

// #region catalog
const catalogView: Plugin = {
  name: 'catalog-view',
  version: '1.0.0',
  apply({ tools }) {
    const exposed = new Map<string, SluiceTool>();
    tools.subscribe(({ added, removed }) => {
      for (const tool of removed) exposed.delete(tool.name);
      for (const tool of added) exposed.set(tool.name, tool);
    });
  },
};
// #endregion catalog
export { catalogView };
