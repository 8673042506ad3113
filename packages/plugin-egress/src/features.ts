import { MetaKey } from '@sluice/core';
import type { FeatureResult, RequestContext } from '@sluice/core';
import { cutBlock } from './cut-block.js';
import type { EgressRecord } from './intervention.js';
import { interventionText } from './intervention.js';
import { jsonSize, jsonSizeBound } from './json-size.js';

/** Room kept for the intervention message's own wrapping and the record in `_meta`. */
const RESERVE_BYTES = 512;

type ReadResult = Extract<FeatureResult, { method: 'resources/read' }>['result'];
type PromptResult = Extract<FeatureResult, { method: 'prompts/get' }>['result'];
type ResourceContent = ReadResult['contents'][number];
type PromptMessage = PromptResult['messages'][number];

/**
 * Caps an upstream's `resources/read` or `prompts/get` answer at `limitBytes`
 * (its JSON size), as tool results are capped: what fits is kept in order,
 * the first text that does not fit is cut at a character boundary, nothing
 * after it is kept, and the intervention message ends the answer (a text
 * resource content, or a user message). In audit mode it only logs.
 */
export function capFeature(
  answer: FeatureResult,
  ctx: Pick<RequestContext, 'upstream' | 'target' | 'logger'>,
  limitBytes: number,
  audit: boolean,
): FeatureResult {
  if (jsonSizeBound(answer.result, limitBytes) <= limitBytes || jsonSize(answer.result, limitBytes) <= limitBytes)
    return answer;
  const originalBytes = Math.min(jsonSize(answer.result), Number.MAX_SAFE_INTEGER);
  const notice = interventionText(limitBytes);
  const room = limitBytes - RESERVE_BYTES - notice.length;
  const capped =
    answer.method === 'resources/read' ? capRead(answer.result, room, notice) : capPrompt(answer.result, room, notice);
  const { keptBytes } = capped;
  const record: EgressRecord = { originalBytes, keptBytes, limitBytes };
  ctx.logger.warn(
    {
      event: 'egress.truncated',
      method: answer.method,
      upstream: ctx.upstream,
      target: ctx.target,
      originalBytes,
      keptBytes,
      limitBytes,
      ...(audit ? { audit } : {}),
    },
    audit
      ? `audit: egress would have truncated a ${answer.method} answer`
      : `egress truncated a ${answer.method} answer`,
  );
  if (audit) return answer;
  const _meta = { ...answer.result._meta, [MetaKey.EGRESS]: record };
  return capped.method === 'resources/read'
    ? { method: capped.method, result: { contents: capped.contents, _meta } }
    : { method: capped.method, result: { ...capped.prompt, _meta } };
}

interface CappedRead {
  readonly method: 'resources/read';
  readonly contents: ResourceContent[];
  readonly keptBytes: number;
}

interface CappedPrompt {
  readonly method: 'prompts/get';
  readonly prompt: Pick<PromptResult, 'description' | 'messages'>;
  readonly keptBytes: number;
}

function capRead(result: ReadResult, room: number, notice: string): CappedRead {
  const contents: ResourceContent[] = [];
  let left = room;
  for (const content of result.contents) {
    const size = jsonSize(content, left);
    if (size <= left) {
      contents.push(content);
      left -= size;
      continue;
    }
    const cut = cutBlock({ type: 'resource', resource: content }, left);
    if (cut?.block.type === 'resource') {
      contents.push(cut.block.resource);
      left -= cut.bytes;
    }
    break;
  }
  const uri = result.contents[0]?.uri ?? 'sluice://egress';
  contents.push({ uri, mimeType: 'text/plain', text: notice });
  return { method: 'resources/read', contents, keptBytes: room - left };
}

function capPrompt(result: PromptResult, room: number, notice: string): CappedPrompt {
  const messages: PromptMessage[] = [];
  let left = room;
  for (const message of result.messages) {
    const size = jsonSize(message, left);
    if (size <= left) {
      messages.push(message);
      left -= size;
      continue;
    }
    const cut = cutBlock(message.content, left - jsonSize({ role: message.role, content: {} }));
    if (cut !== undefined) {
      messages.push({ role: message.role, content: cut.block });
      left -= cut.bytes;
    }
    break;
  }
  messages.push({ role: 'user', content: { type: 'text', text: notice } });
  const prompt = { ...(result.description === undefined ? {} : { description: result.description }), messages };
  return { method: 'prompts/get', prompt, keptBytes: room - left };
}
