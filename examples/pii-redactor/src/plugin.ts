import { Stage, definePlugin, parseOptions, refusal, selectTools } from '@sluice/core';
import type { CallToolResult, Plugin } from '@sluice/core';
import { PiiRedactorErrorCode } from './errors.js';
import { PiiRedactorOptions } from './options.js';
import type { PiiPattern } from './options.js';
import './policy.js';
import { redact } from './redact.js';

export const NAME = 'pii-redactor';
export const VERSION = '0.0.0';

/** Replaces e-mail addresses and phone numbers in the text blocks of tool results. */
export function piiRedactor(options: PiiRedactorOptions = {}): Plugin {
  const config = parseOptions(NAME, PiiRedactorOptions, options);
  return definePlugin({
    name: NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, logger, mode }) {
      const patterns: ReadonlySet<PiiPattern> = new Set(config.patterns);
      const matches = config.tools === undefined ? () => true : selectTools(config.tools);

      hooks.postCall.tap({ name: NAME, stage: Stage.TRANSFORM }, (result, ctx) => {
        // The tool check is two lookups; the real work, scanning text, can only happen per call.
        if (ctx.tool.policy.pii?.skip || !matches(ctx.tool.name)) return result;
        let email = 0;
        let phone = 0;
        const content = result.content.map((block) => {
          if (block.type !== 'text') return block;
          const r = redact(block.text, patterns);
          email += r.email;
          phone += r.phone;
          return r.text === block.text ? block : { ...block, text: r.text };
        });
        if (email + phone === 0) return result;

        // Counts only: the redacted values must never reach the logs.
        const fields = { event: 'pii.redacted', tool: ctx.tool.name, email, phone, mode };
        if (mode === 'audit') {
          logger.info(fields, 'personal data found in a tool result (audit mode: left in place)');
          return result;
        }
        logger.info(fields, 'personal data redacted from a tool result');
        if (result.structuredContent !== undefined) {
          return refusal({
            code: PiiRedactorErrorCode.PII_IN_STRUCTURED_CONTENT,
            message: 'The tool result held personal data in structured content, which cannot be redacted.',
            suggestion: 'Ask for the information without personal contact details.',
            details: { tool: ctx.tool.name, email, phone },
          });
        }
        return { ...result, content } satisfies CallToolResult;
      });
    },
  });
}
