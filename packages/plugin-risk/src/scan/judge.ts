import { z } from 'zod';
import type { ScanHit } from './scanner.js';
import { excerpt } from './scanner.js';
import type { Severity } from './patterns.js';
import { PoisonPattern, SEVERITIES } from './patterns.js';

/** What an outside judge is given: one tool definition as the upstream declared it, and what the scan found in it. */
export interface JudgeInput {
  /** The upstream's configured name. */
  readonly server: string;
  /** The definition's fingerprint (the ledger's), which keys the verdict cache. */
  readonly fingerprint: string;
  readonly definition: Readonly<Record<string, unknown>>;
  readonly hits: readonly Pick<ScanHit, 'pattern' | 'severity' | 'surface' | 'excerpt'>[];
}

/** A judge's answer: whether the definition is poisoned, why, and (optionally) how much that weighs. */
export interface JudgeVerdict {
  readonly poisoned: boolean;
  readonly reason: string;
  /** Default `high`. */
  readonly severity?: Severity;
}

/** An outside judge: a classifier, a guardrail service, a person's list. Aborted when its time is up. */
export type JudgeFunction = (input: JudgeInput, signal: AbortSignal) => Promise<JudgeVerdict> | JudgeVerdict;

/** The reference adapter's settings: a generic HTTP guardrail endpoint. */
export const JudgeEndpoint = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .describe(
        'The guardrail endpoint: POSTed `{ server, fingerprint, definition, hits }`, answering `{ poisoned, reason, severity? }`.',
      ),
    headers: z
      .record(z.string().min(1), z.string())
      .default({})
      .describe('Headers sent with each request (an `authorization` header, say).'),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .max(1024 * 1024)
      .default(64 * 1024)
      .describe('A longer answer is an error.'),
  })
  .strict();
export type JudgeEndpoint = z.input<typeof JudgeEndpoint>;

const VerdictSchema = z.object({
  poisoned: z.boolean(),
  reason: z.string().max(2_000),
  severity: z.enum(SEVERITIES).optional(),
});

/** Why a judge gave no verdict. */
export class JudgeUnavailable extends Error {
  override readonly name = 'JudgeUnavailable';
}

/**
 * The reference adapter for an HTTP guardrail: POSTs the input as JSON and
 * reads `{ poisoned, reason, severity? }` back, at most `maxResponseBytes`
 * of it. Any other status, shape or size is an error (no verdict).
 */
export function httpJudge(endpoint: JudgeEndpoint): JudgeFunction {
  // Parsed once per judge: zod's compiled fast path for object schemas would cost more than it saves.
  const { url, headers, maxResponseBytes } = JudgeEndpoint.parse(endpoint, { jitless: true });
  return async (input, signal) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(input),
      signal,
      redirect: 'error',
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new JudgeUnavailable(`the judge answered HTTP ${response.status}`);
    }
    const text = await readBounded(response, maxResponseBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new JudgeUnavailable('the judge answered something that is not JSON');
    }
    const verdict = VerdictSchema.safeParse(body);
    if (!verdict.success) throw new JudgeUnavailable('the judge answered without { poisoned, reason }');
    return verdict.data;
  };
}

async function readBounded(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await response.body?.cancel();
    throw new JudgeUnavailable(`the judge's answer is larger than ${limit} bytes`);
  }
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new JudgeUnavailable(`the judge's answer is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** A verdict as hits: one `JUDGE_VERDICT` hit (the reason its excerpt) when poisoned, none when clean. */
export function judgeHits(verdict: JudgeVerdict): ScanHit[] {
  if (!verdict.poisoned) return [];
  return [
    {
      pattern: PoisonPattern.JUDGE_VERDICT,
      severity: verdict.severity ?? 'high',
      surface: '/',
      excerpt: excerpt(verdict.reason, 0),
    },
  ];
}

/** How long a judge may take, and how many verdicts are kept. */
export interface JudgeBounds {
  readonly timeoutMs: number;
  readonly cacheSize: number;
}

/**
 * A judge bounded by a timeout, its verdicts cached by fingerprint (least
 * recently used out first; failures are not cached). A poisoned verdict is
 * one more hit, `JUDGE_VERDICT`, whose excerpt is the judge's reason.
 */
export class BoundedJudge {
  private readonly cache = new Map<string, JudgeVerdict>();
  private readonly pending = new Map<string, Promise<JudgeVerdict>>();

  constructor(
    private readonly judge: JudgeFunction,
    private readonly bounds: JudgeBounds,
  ) {}

  /** The judge's hit for a definition, none for a clean verdict; rejects with `JudgeUnavailable` when there is no verdict. */
  async hits(input: JudgeInput): Promise<ScanHit[]> {
    return judgeHits(await this.verdict(input));
  }

  async verdict(input: JudgeInput): Promise<JudgeVerdict> {
    const cached = this.cache.get(input.fingerprint);
    if (cached !== undefined) {
      this.cache.delete(input.fingerprint);
      this.cache.set(input.fingerprint, cached);
      return cached;
    }
    const inFlight = this.pending.get(input.fingerprint);
    if (inFlight) return inFlight;
    const asked = this.ask(input).finally(() => this.pending.delete(input.fingerprint));
    this.pending.set(input.fingerprint, asked);
    const verdict = await asked;
    this.cache.set(input.fingerprint, verdict);
    if (this.cache.size > this.bounds.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
    return verdict;
  }

  private async ask(input: JudgeInput): Promise<JudgeVerdict> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new JudgeUnavailable(`the judge gave no verdict within ${this.bounds.timeoutMs} ms`));
      }, this.bounds.timeoutMs);
    });
    try {
      const verdict = await Promise.race([Promise.resolve(this.judge(input, controller.signal)), timeout]);
      const checked = VerdictSchema.safeParse(verdict);
      if (!checked.success) throw new JudgeUnavailable('the judge returned no { poisoned, reason }');
      return checked.data;
    } catch (error) {
      if (error instanceof JudgeUnavailable) throw error;
      throw new JudgeUnavailable(`the judge failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
