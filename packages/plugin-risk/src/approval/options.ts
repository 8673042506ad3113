import { ToolSelectorListSchema } from '@sluice/core';
import { z } from 'zod';
import { RISK_LEVELS } from '../scoring/levels.js';
import { MAX_PENDING_APPROVALS } from './pending.js';

/** HMAC-SHA256 keys shorter than the hash add nothing but guessability. */
export const MIN_SECRET_BYTES = 32;

/** Questions waiting at once, over every replica, unless `approval.questions.max` says otherwise. */
export const DEFAULT_MAX_QUESTIONS = MAX_PENDING_APPROVALS;
/** One caller's share of them, unless `approval.questions.perCaller` says otherwise. */
export const DEFAULT_QUESTIONS_PER_CALLER = 20;
/** Questions one caller may be asked a minute, unless `approval.questions.perCallerPerMinute` says otherwise. */
export const DEFAULT_QUESTIONS_PER_MINUTE = 120;
/** The most `approval.questions.perCallerPerMinute` may be. */
export const MAX_QUESTIONS_PER_MINUTE = 100_000;
/** The most `approval.questions.max` may be: listing reads one store key per place. */
export const MAX_QUESTIONS_LIMIT = 5_000;

/**
 * Who answers a tool's approval: the person at the `client` (elicitation,
 * an input-required round), an `operator` (console, admin API, `sluice
 * approvals`, a webhook receiver; never the client), or the client first and
 * then an operator (both must approve).
 */
export const APPROVAL_CHANNELS = ['client', 'operator', 'client-then-operator'] as const;
export const ApprovalChannelSchema = z.enum(APPROVAL_CHANNELS);
export type ApprovalChannelSetting = z.infer<typeof ApprovalChannelSchema>;

/** The `approval` options of `risk()`: who is asked, for how long, and how the 2026-07-28 state is sealed. */
export const ApprovalOptions = z
  .object({
    /**
     * Tools whose composed level is at or above this ask a person before each
     * call, unless listed in `autoExecute` or marked `hitl: false`. Absent:
     * only tools marked `hitl: true` ask.
     */
    defaultFromLevel: z
      .enum(RISK_LEVELS)
      .optional()
      .describe(
        'Tools whose composed level (before the approval credit) is at or above this ask a person before each call, unless on `autoExecute` or marked `hitl: false`. Absent: only tools marked `hitl: true` ask.',
      ),
    /** Tool selectors (core's syntax, case-insensitive; exposed or upstream name) that run without asking: the operator's auto-execute list. */
    autoExecute: ToolSelectorListSchema.default([]).describe(
      "Tool selectors (case-insensitive; exposed or upstream name) for tools that run without asking: the operator's auto-execute list.",
    ),
    /** How long a person has to answer: the elicitation's timeout (2025-11-25), the state's lifetime (2026-07-28). */
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(86_400_000)
      .default(300_000)
      .describe(
        "How long a person has to answer, in ms: the elicitation's timeout (2025-11-25), the sealed state's lifetime (2026-07-28).",
      ),
    /**
     * The key that seals the 2026-07-28 `requestState` (HMAC-SHA256), at least
     * 32 bytes. Give every replica the same one. Absent: a random key per
     * process, so approvals do not survive a restart or cross replicas.
     */
    secret: z
      .string()
      .refine(
        (value) => Buffer.byteLength(value, 'utf8') >= MIN_SECRET_BYTES,
        `must be at least ${MIN_SECRET_BYTES} bytes`,
      )
      .optional()
      .describe(
        'The HMAC-SHA256 key (at least 32 bytes) that seals 2026-07-28 approval state; give every replica the same one. Absent: a random key per process, so approvals do not survive a restart or cross replicas.',
      ),
    /** Who answers, for tools whose own rule or policy does not say. */
    channel: ApprovalChannelSchema.default('client').describe(
      'Who answers an approval, for tools whose rule (`tools[].approvalChannel`) or policy does not say: `client` (the person at the MCP client), `operator` (console, admin API, `sluice approvals`, a webhook receiver; the client can never answer), or `client-then-operator` (both, in that order).',
    ),
    /** How an operator question is waited for. */
    operator: z
      .object({
        /** How often a waiting call looks in a shared store for an answer given on another replica. */
        pollMs: z
          .number()
          .int()
          .min(10)
          .max(60_000)
          .default(250)
          .describe(
            'How often, in ms, a call waiting for an operator looks in a shared store (Redis) for an answer given on another replica. Answers given on the same replica wake it at once.',
          ),
        /** A 2026-07-28 retry waits this long for the answer before it says "still waiting". */
        holdMs: z
          .number()
          .int()
          .min(0)
          .max(120_000)
          .default(10_000)
          .describe(
            'How long, in ms, a 2026-07-28 retry carrying an operator question waits for the answer before it answers "still waiting" (another input-required round with the same state).',
          ),
      })
      .strict()
      .prefault({})
      .describe('How calls wait for an operator answer.'),
    /** How many questions may wait at once: in all, and per caller. */
    questions: z
      .object({
        /** Questions waiting at once over every replica sharing the store: all of them are listed. */
        max: z
          .number()
          .int()
          .min(1)
          .max(MAX_QUESTIONS_LIMIT)
          .default(DEFAULT_MAX_QUESTIONS)
          .describe(
            'Questions waiting for a person at once, over every replica sharing the store (operator questions and the ones clients answer): every one is listed; one more is refused (`APPROVAL_BUSY`) rather than asked unlisted.',
          ),
        /** Of which one caller may have this many. */
        perCaller: z
          .number()
          .int()
          .min(1)
          .max(MAX_QUESTIONS_LIMIT)
          .default(DEFAULT_QUESTIONS_PER_CALLER)
          .describe(
            'Questions one caller (its verified identity; every unauthenticated caller is one) may have waiting at once, over every replica; one more is refused (`APPROVAL_BUSY`, with `retryAfterMs`: when the first of them lapses) without anybody being asked. An identical call joins its operator question and takes no place; a question answered, closed or lapsed frees its place.',
          ),
        /** Questions one caller may be asked a minute, however fast they end: what they leave in the store is bounded by it. */
        perCallerPerMinute: z
          .number()
          .int()
          .min(1)
          .max(MAX_QUESTIONS_PER_MINUTE)
          .default(DEFAULT_QUESTIONS_PER_MINUTE)
          .describe(
            "Questions one caller (its verified identity; every unauthenticated caller is one) may be asked in a minute (a fixed minute of the clock), over every replica, however fast they are answered; one more is refused (`APPROVAL_BUSY`, `share: 'rate'`, with `retryAfterMs`: the end of the minute) without anybody being asked. It bounds what a caller's ended questions leave in the store (a 2026-07-28 state's single-use marks, an operator question's records).",
          ),
      })
      .strict()
      .refine((limits) => limits.perCaller <= limits.max, {
        message: 'must not be above max',
        path: ['perCaller'],
      })
      .prefault({})
      .describe(
        "How many questions may wait for a person at once, in all and of one caller's, and how many one caller may be asked a minute.",
      ),
    /** At most this many characters of the arguments are shown in the form. */
    maxArgumentChars: z
      .number()
      .int()
      .min(16)
      .max(10_000)
      .default(400)
      .describe(
        'About this many characters of the arguments are shown in the form, long values shortened one by one; when the fields cannot all fit, nobody is asked (`APPROVAL_UNAVAILABLE`).',
      ),
  })
  .strict();
export type ApprovalOptions = z.input<typeof ApprovalOptions>;
export type ApprovalConfig = z.output<typeof ApprovalOptions>;
