import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { messageOf } from '@sluice/core';
import type { Logger } from '@sluice/core';
import type { ApprovalEvent } from '@sluice/plugin-risk';
import { z } from 'zod';
import type { AnswerOutcome, ApprovalAnswer } from './approvals.js';
import { answerFields, checkOutcome } from './approvals.js';
import { csrfField, esc, sendPage } from './html.js';
import { HttpProblem, allow, fieldsOf, readBody, sendJson } from './http-io.js';

/** Where a webhook receiver's answer link points (a public route: the link itself is the credential). */
export const ANSWER_LINK_PATH = '/admin/v1/approvals/answer';
/** The header that carries the signature of a webhook's body. */
export const SIGNATURE_HEADER = 'x-sluice-signature';

export interface WebhookSettings {
  readonly url: string;
  readonly secret: string;
  readonly publicUrl?: string | undefined;
  readonly timeoutMs: number;
  /** POSTs open at once; more wait in the queue. */
  readonly maxInFlight: number;
  /** POSTs waiting for one of the `maxInFlight` to finish; one more is dropped, and said so. */
  readonly maxQueued: number;
}

type Asked = Extract<ApprovalEvent, { kind: 'asked' }>;

const LINK_CONTEXT = 'dev.sluice/gateway/approval-link\u0000';
const MAX_TOKEN_CHARS = 512;
const TokenSchema = z
  .object({ q: z.string().max(64), d: z.enum(['approved', 'denied']), e: z.number().int() })
  .strict();
type Token = z.infer<typeof TokenSchema>;

/**
 * The approval webhook: when a call asks an operator, a signed POST
 * (`x-sluice-signature: t=<ms>,v1=<hex HMAC-SHA256 of "<t>.<body>">`) to the
 * configured URL, carrying the question and two answer links (approve,
 * deny). A link is sealed with the same secret, names one question and one
 * decision, expires with the question, and answers at most once (the first
 * answer to a question stands). Following it with GET shows a confirmation
 * page, so a link preview cannot answer; POST answers.
 *
 * A slow or absent receiver costs bounded memory: at most `maxInFlight`
 * POSTs are open at once, at most `maxQueued` more wait (first in, first
 * out; one whose question was answered or lapsed meanwhile, on any replica,
 * is not sent), and a question past that is dropped with a logged
 * `approval.webhook.dropped` naming it (it still waits in the console, the
 * admin API and `sluice approvals`).
 */
export class ApprovalWebhook {
  private readonly queue: Asked[] = [];
  private inFlight = 0;

  constructor(
    private readonly settings: WebhookSettings,
    private readonly base: () => URL | undefined,
    private readonly answer: (id: string, answer: ApprovalAnswer) => Promise<AnswerOutcome>,
    /** Whether a question still waits for an answer, in the store every replica shares. */
    private readonly waiting: (id: string) => Promise<boolean>,
    private readonly logger: Logger,
  ) {}

  /** Who the answers given through the links are recorded as. */
  get operator(): string {
    return `webhook:${new URL(this.settings.url).host}`;
  }

  /**
   * Sends a new operator question to the receiver, now or once a POST
   * before it finished; past the queue's bound it is dropped. Failures are
   * logged, never thrown.
   */
  notify(event: ApprovalEvent): void {
    if ((event.kind === 'answered' || event.kind === 'lapsed') && event.id !== undefined) {
      // A question answered or lapsed while its POST waited is not posted: its links could answer nothing.
      const queued = this.queue.findIndex((waiting) => waiting.id === event.id);
      if (queued !== -1) {
        this.queue.splice(queued, 1);
        this.logger.info(
          { event: 'approval.webhook.skipped', id: event.id },
          `the question ${event.kind === 'answered' ? 'was answered' : 'lapsed'} while its webhook waited: not posted`,
        );
      }
      return;
    }
    if (event.kind !== 'asked' || event.joined || event.channel !== 'operator' || event.id === undefined) return;
    if (this.inFlight < this.settings.maxInFlight) {
      this.start(event);
      return;
    }
    if (this.queue.length < this.settings.maxQueued) {
      this.queue.push(event);
      return;
    }
    this.logger.warn(
      {
        event: 'approval.webhook.dropped',
        id: event.id,
        inFlight: this.inFlight,
        queued: this.queue.length,
      },
      'the approval webhook is behind: this question is not posted (it still waits for an answer in the console, the admin API and sluice approvals)',
    );
  }

  /** POSTs open and waiting now. */
  backlog(): { inFlight: number; queued: number } {
    return { inFlight: this.inFlight, queued: this.queue.length };
  }

  /** `queued`: the question waited here, and may have been answered meanwhile on another replica. */
  private start(event: Asked, queued = false): void {
    this.inFlight++;
    const id = event.id ?? '';
    void this.sendIfWaiting(event, id, queued)
      .catch((error: unknown) =>
        this.logger.warn(
          { event: 'approval.webhook.failed', id, err: messageOf(error) },
          'the approval webhook could not be delivered',
        ),
      )
      .finally(() => {
        this.inFlight--;
        this.next();
      });
  }

  /** The oldest queued question whose question has not lapsed, into the slot just freed. */
  private next(): void {
    const now = Date.now();
    for (let event = this.queue.shift(); event !== undefined; event = this.queue.shift()) {
      if (event.expiresAt > now) {
        this.start(event, true);
        return;
      }
      this.logger.info(
        { event: 'approval.webhook.skipped', id: event.id },
        'the question lapsed while its webhook waited: not posted',
      );
    }
  }

  /** The link route, public on the listener. */
  routes(): Record<string, RequestListener> {
    return { [ANSWER_LINK_PATH]: (req, res) => void this.follow(req, res) };
  }

  /**
   * Posts the question, unless it waited in the queue and was answered or lapsed since: this replica hears of its
   * own answers only, so an answer given on another one is looked up in the store. A lookup that fails (the store
   * out of reach) posts it: the operator hears of a question that may still wait.
   */
  private async sendIfWaiting(event: Asked, id: string, queued: boolean): Promise<void> {
    const waits = !queued || (await this.waiting(id).catch(() => true));
    if (!waits) {
      this.logger.info(
        { event: 'approval.webhook.skipped', id },
        'the question was answered or lapsed while its webhook waited: not posted',
      );
      return;
    }
    await this.send(event, id);
  }

  private async send(event: Asked, id: string): Promise<void> {
    const base = this.settings.publicUrl === undefined ? this.base() : new URL(this.settings.publicUrl);
    if (base === undefined) throw new Error('the gateway does not listen on HTTP yet, so no answer link can be made');
    const link = (decision: Token['d']) => {
      const url = new URL(ANSWER_LINK_PATH, base);
      url.searchParams.set('token', this.seal({ q: id, d: decision, e: event.expiresAt }));
      return url.href;
    };
    const body = JSON.stringify({
      type: 'approval.asked',
      id,
      tool: event.tool,
      server: event.server,
      level: event.level,
      caller: event.caller ?? null,
      reason: event.reason ?? null,
      message: event.message,
      at: event.at,
      expiresAt: event.expiresAt,
      approveUrl: link('approved'),
      denyUrl: link('denied'),
    });
    const answer = await fetch(this.settings.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature(this.settings.secret, body) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(this.settings.timeoutMs),
    });
    // Nothing of the receiver's answer is read beyond its status.
    await answer.body?.cancel();
    if (!answer.ok) throw new Error(`the receiver answered ${answer.status}`);
    this.logger.info({ event: 'approval.webhook.sent', id, status: answer.status }, 'approval webhook delivered');
  }

  private async follow(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      allow(req, ['GET', 'POST']);
      const token = new URL(req.url ?? '/', 'http://link.invalid').searchParams.get('token') ?? '';
      const sealed = this.open(token, Date.now());
      if (req.method === 'GET') {
        confirmPage(res, sealed, token);
        return;
      }
      const fields = fieldsOf(await readBody(req), req.headers['content-type'] ?? 'application/json');
      const { reason } = answerFields({ ...fields, id: sealed.q }, sealed.d);
      checkOutcome(await this.answer(sealed.q, { decision: sealed.d, by: this.operator, via: 'webhook', reason }));
      sendJson(res, 200, { id: sealed.q, decision: sealed.d, by: this.operator, via: 'webhook' });
    } catch (error) {
      const status = error instanceof HttpProblem ? error.status : 500;
      if (status >= 500) this.logger.error({ event: 'admin.failed', err: error }, 'an answer link failed');
      if (!res.headersSent) sendJson(res, status, { error: status >= 500 ? 'internal error' : messageOf(error) });
      else res.end();
    }
  }

  private seal(token: Token): string {
    const payload = Buffer.from(JSON.stringify(token), 'utf8').toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The link's question and decision; a forged, altered or expired link is a 403. */
  private open(token: string, now: number): Token {
    const refused = new HttpProblem(403, 'this answer link is not valid (altered, expired, or not ours)');
    if (token.length === 0 || token.length > MAX_TOKEN_CHARS) throw refused;
    const [payload, mac, ...rest] = token.split('.');
    if (payload === undefined || mac === undefined || rest.length > 0) throw refused;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(payload);
    if (given.length !== expected.length || given.toString('base64url') !== mac || !timingSafeEqual(given, expected))
      throw refused;
    let parsed: Token;
    try {
      parsed = TokenSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    } catch {
      throw refused;
    }
    if (now >= parsed.e) throw new HttpProblem(409, 'the question lapsed before the answer came');
    return parsed;
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.settings.secret).update(LINK_CONTEXT).update(payload, 'utf8').digest();
  }
}

/** `t=<ms>,v1=<hex>`: the receiver recomputes HMAC-SHA256(secret, `${t}.${body}`) and compares. */
export function signature(secret: string, body: string, at = Date.now()): string {
  const mac = createHmac('sha256', secret).update(`${at}.${body}`, 'utf8').digest('hex');
  return `t=${at},v1=${mac}`;
}

function confirmPage(res: ServerResponse, token: Token, raw: string): void {
  const verb = token.d === 'approved' ? 'Approve' : 'Deny';
  const reason =
    token.d === 'denied'
      ? '<input name="reason" required maxlength="500" placeholder="why (the caller reads it)"> '
      : '<input name="reason" maxlength="500" placeholder="a note (optional)"> ';
  const action = `${ANSWER_LINK_PATH}?token=${encodeURIComponent(raw)}`;
  sendPage(
    res,
    '/console',
    '',
    `${verb} a call`,
    `<p>${verb} the call waiting as question <code>${esc(token.q)}</code>?</p>
<form method="post" action="${esc(action)}">${csrfField(undefined)}${reason}<button class="${token.d === 'approved' ? 'approve' : 'revoke'}">${verb}</button></form>`,
    { nav: false },
  );
}
