// The judge example in packages/plugin-risk/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import type { JudgeInput, JudgeVerdict } from '@sluice/plugin-risk';
import { risk } from '@sluice/plugin-risk';

declare function myClassifier(
  definition: JudgeInput['definition'],
  hits: JudgeInput['hits'],
  signal: AbortSignal,
): Promise<JudgeVerdict>;

// #region judge
risk({ scan: { judge: async ({ definition, hits }, signal) => myClassifier(definition, hits, signal) } });
// or, in code or in a gateway config file, a generic HTTP guardrail:
risk({ scan: { judge: { url: 'http://127.0.0.1:8700/judge', headers: { authorization: 'Bearer ...' } } } });
// #endregion judge
