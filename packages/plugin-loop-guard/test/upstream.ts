// Drafts of upstream tools, admitted the way an upstream import admits them (server.admit),
// for tests of the import hook that need no upstream connection.
import type { Executor, ToolDraft, ToolSource } from '@sluice/core';

export function upstreamDraft(
  upstream: string,
  originalName: string,
  base: Executor,
  exposedAs = originalName,
): ToolDraft {
  const source: ToolSource = { kind: 'upstream', upstream, originalName, trusted: false };
  return {
    tool: { name: exposedAs, definition: { name: exposedAs, inputSchema: { type: 'object' } }, policy: {}, source },
    base,
  };
}

export const answer: Executor = async () => ({ content: [{ type: 'text', text: 'from upstream' }] });
