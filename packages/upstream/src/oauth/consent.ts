import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from '@sluice/core';
import { isRpcError } from '@sluice/core/internal';
import type { Store } from '@sluice/core';
import type { ConnectLink } from './errors.js';
import { UpstreamAuthError, isUpstreamAuthError } from './errors.js';
import { LatestPerCaller } from './latest-per-caller.js';
import type { PerUserGrants } from './per-user.js';

/** The consent page a caller's elicitation points at. */
export const CONNECT_PATH = '/oauth/upstream/connect';
/** Where the authorization server sends the browser back (the redirect URI to register). */
export const CALLBACK_PATH = '/oauth/upstream/callback';

/** Tickets and states: 32 random bytes, base64url. Anything else is refused unread. */
const RANDOM_VALUE = /^[A-Za-z0-9_-]{43}$/;
const MAX_CODE_CHARS = 4_096;
const MAX_ISSUER_CHARS = 2_048;

/** A consent link: single-use, bound to one upstream and one caller, and the elicitation that carried it. */
interface Ticket {
  readonly upstream: string;
  readonly subject: string;
  readonly elicitationId?: string;
}

/** A started sign-in: bound to the ticket's upstream and caller, with its PKCE verifier. */
interface Started extends Ticket {
  readonly verifier: string;
  readonly redirectUri: string;
}

const random = (): string => randomBytes(32).toString('base64url');
const sha256 = (value: string): string => createHash('sha256').update(value).digest('base64url');
// Stored under a hash: a dump of the store holds no live link or state.
const ticketKey = (ticket: string): string => `sluice:upstream-consent:ticket:${sha256(ticket)}`;
const stateKey = (state: string): string => `sluice:upstream-consent:state:${sha256(state)}`;
/** Where a replica that completed a consent tells the replica whose client was asked. */
const COMPLETED_CHANNEL = 'sluice:upstream-consent:completed';
/**
 * Elicitations a server remembers it sent, for their completion notice, and callers it remembers the links and
 * sign-ins of; the oldest are forgotten first.
 */
const MAX_WAITING = 10_000;
/** Consent links one caller holds for one upstream at once (on this replica); a newer one spends the oldest. */
const MAX_LINKS_PER_CALLER = 8;
/** Sign-ins one caller has started at one upstream at once (on this replica); a newer one replaces the oldest. */
const MAX_SIGN_INS_PER_CALLER = 8;
const ELICITATION_ID = /^[0-9a-f-]{36}$/;

/** A consent link handed to a caller: its ticket and elicitation, to spend them once newer links take their place. */
interface Given {
  readonly ticket: string;
  readonly elicitationId: string;
}

/** An elicitation this server asked with: when it lapses, and how to tell its client it completed. */
interface Waiting {
  readonly expiresAt: number;
  notify?: () => Promise<void>;
}

/**
 * The consent flows of a server's `per_user` upstreams: a caller without a
 * grant gets a single-use link to the consent page; the page starts an
 * authorization-code flow with PKCE (S256) and a single-use state bound to
 * that caller; the callback redeems the code with that state's verifier and
 * seals the grant under that caller. Tickets and states live in the store,
 * so any replica may serve any step. A replica keeps each caller's eight
 * latest links and eight latest sign-ins per upstream there: a newer one
 * spends the caller's oldest, never another caller's.
 */
export class ConsentFlows {
  private readonly upstreams = new Map<string, PerUserGrants>();
  private readonly waiting = new Map<string, Waiting>();
  /** The latest links given to each caller for each upstream. */
  private readonly given = new LatestPerCaller<Given>(MAX_LINKS_PER_CALLER, MAX_WAITING);
  /** The store keys of the latest sign-ins each caller started at each upstream (by opening a link here). */
  private readonly started = new LatestPerCaller<string>(MAX_SIGN_INS_PER_CALLER, MAX_WAITING);
  private subscription: Promise<(() => void) | undefined> | undefined;
  private origin: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  register(grants: PerUserGrants): void {
    this.upstreams.set(grants.upstream, grants);
  }

  /** The first listener's origin serves consent pages unless an upstream's `redirectUri` says otherwise. */
  listening(url: URL): void {
    this.origin ??= url.origin;
  }

  /** A fresh single-use consent link for `subject` at `grants`' upstream. */
  async ask(grants: PerUserGrants, subject: string): Promise<ConnectLink> {
    const base = grants.options.redirectUri ?? this.origin;
    if (base === undefined)
      throw new UpstreamAuthError(
        grants.upstream,
        `Upstream "${grants.upstream}" needs each caller to connect an account, and no listener serves the consent page`,
        'Ask the operator to serve HTTP (`listen`) or to set `auth.redirectUri`.',
      );
    const ticket = random();
    const elicitationId = randomUUID();
    const value: Ticket = { upstream: grants.upstream, subject, elicitationId };
    const ttlMs = grants.options.consentTtlSec * 1_000;
    await this.store.set(ticketKey(ticket), value, { ttlMs });
    this.remember(elicitationId, Date.now() + ttlMs);
    // However often a caller calls without connecting, it holds that many tickets in the store and notices here.
    await this.spend(this.given.add(callerOf(value), { ticket, elicitationId }));
    const url = new URL(CONNECT_PATH, base);
    url.searchParams.set('ticket', ticket);
    return { url: url.href, elicitationId };
  }

  /** Spends links: their tickets leave the store, their completion notices are forgotten. */
  private async spend(links: readonly Given[]): Promise<void> {
    for (const link of links) this.waiting.delete(link.elicitationId);
    await Promise.all(links.map((link) => this.store.delete(ticketKey(link.ticket))));
  }

  /**
   * Passes on the answer `sdk` gives a client, whatever the request. When it
   * is a URL elicitation (-32042) this server asked with (2025-11-25), the
   * client is told `notifications/elicitation/complete` once that consent
   * completes; ids this server did not issue are ignored.
   */
  watch<T>(sdk: Server, answer: Promise<T>): Promise<T> {
    return answer.catch((error: unknown) => {
      for (const id of urlElicitationIds(error))
        this.awaiting(id, async () => sdk.createElicitationCompletionNotifier(id)());
      throw error;
    });
  }

  /** An elicitation this server asked with reached a client: `notify` tells it the consent completed. */
  private awaiting(elicitationId: string, notify: () => Promise<void>): void {
    const waiting = this.waiting.get(elicitationId);
    if (waiting === undefined) return;
    waiting.notify = notify;
    this.subscription ??= this.subscribe();
  }

  /** Stops listening for completions told by other replicas. */
  async close(): Promise<void> {
    const unsubscribe = await this.subscription;
    unsubscribe?.();
    this.waiting.clear();
    this.given.clear();
    this.started.clear();
  }

  private remember(elicitationId: string, expiresAt: number): void {
    const now = Date.now();
    for (const [id, waiting] of this.waiting) {
      if (waiting.expiresAt > now && this.waiting.size < MAX_WAITING) break;
      this.waiting.delete(id);
    }
    this.waiting.set(elicitationId, { expiresAt });
  }

  /** A consent completed: its client is told, here or (through the store's message bus) by the replica that asked. */
  private async completed(elicitationId: string | undefined): Promise<void> {
    if (elicitationId === undefined) return;
    if (this.notifyLocal(elicitationId)) return;
    await this.store.messages?.publish(COMPLETED_CHANNEL, elicitationId).catch((error: unknown) => {
      this.logger.warn({ event: 'upstream.consent_notice_failed', err: error }, 'a consent completion was not relayed');
    });
  }

  private notifyLocal(elicitationId: string): boolean {
    const waiting = this.waiting.get(elicitationId);
    if (waiting === undefined) return false;
    this.waiting.delete(elicitationId);
    if (waiting.expiresAt > Date.now()) void waiting.notify?.().catch(() => {});
    return true;
  }

  private async subscribe(): Promise<(() => void) | undefined> {
    const messages = this.store.messages;
    if (messages === undefined) return undefined;
    try {
      return await messages.subscribe(COMPLETED_CHANNEL, (id) => {
        if (ELICITATION_ID.test(id)) this.notifyLocal(id);
      });
    } catch (error) {
      this.logger.warn(
        { event: 'upstream.consent_notice_failed', err: error },
        'consent completions of other replicas will not be relayed',
      );
      return undefined;
    }
  }

  /** The consent page and the callback, served without the listener's authentication: the ticket and state authorize them. */
  routes(): Record<string, http.RequestListener> {
    return {
      [CONNECT_PATH]: (req, res) => void this.serve(res, () => this.connect(req)),
      [CALLBACK_PATH]: (req, res) => void this.serve(res, () => this.callback(req)),
    };
  }

  private async serve(res: http.ServerResponse, handle: () => Promise<PageAnswer>): Promise<void> {
    let answer: PageAnswer;
    try {
      answer = await handle();
    } catch (error) {
      this.logger.warn({ event: 'upstream.consent_failed', err: error }, 'an upstream consent step failed');
      answer = page(
        500,
        'Something went wrong',
        'Sluice could not complete this step. Call the tool again for a new link.',
      );
    }
    res.writeHead(answer.status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      // No script, no frame, no referrer: the ticket in this page's URL goes nowhere else.
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    });
    res.end(answer.html);
  }

  private async connect(req: http.IncomingMessage): Promise<PageAnswer> {
    if (req.method !== 'GET') return page(405, 'Method not allowed', 'Open the link Sluice gave you.');
    const ticket = queryOf(req).get('ticket') ?? '';
    const expired = page(
      400,
      'This link is no longer valid',
      'Each link works once and for a few minutes. Call the tool again to get a new one.',
    );
    if (!RANDOM_VALUE.test(ticket)) return expired;
    const key = ticketKey(ticket);
    const found = await this.store.get<Ticket>(key);
    // Deleting is what spends it: of two concurrent opens, one wins.
    if (found === undefined || !(await this.store.delete(key))) return expired;
    const grants = this.upstreams.get(found.upstream);
    if (grants === undefined) return expired;
    const target = await grants.client.discover();
    if (target.authorizationEndpoint === undefined)
      return page(
        502,
        'Cannot connect this upstream',
        `The authorization server of upstream “${found.upstream}” names no authorization endpoint with PKCE (S256). Ask the operator to set auth.authorizationEndpoint.`,
      );
    const verifier = random();
    const state = random();
    const redirectUri = grants.options.redirectUri ?? new URL(CALLBACK_PATH, this.origin).href;
    const started: Started = { ...found, verifier, redirectUri };
    await this.store.set(stateKey(state), started, { ttlMs: grants.options.consentTtlSec * 1_000 });
    // Opening spent the ticket: the sign-in takes its place in the caller's bound, and replaces its oldest there.
    const replaced = this.started.add(callerOf(found), stateKey(state));
    await Promise.all(replaced.map((key) => this.store.delete(key)));
    const authorize = new URL(target.authorizationEndpoint);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: grants.options.clientId,
      redirect_uri: redirectUri,
      state,
      code_challenge: sha256(verifier),
      code_challenge_method: 'S256',
      resource: target.resource,
      ...(grants.options.scope === undefined ? {} : { scope: grants.options.scope }),
    };
    for (const [name, value] of Object.entries(params)) authorize.searchParams.set(name, value);
    const host = authorize.host;
    return page(
      200,
      `Connect your account at ${found.upstream}`,
      `Sluice will call upstream “${found.upstream}” as you, for the Sluice caller “${found.subject}”. Continue only if that is you: you will sign in at ${host} and choose what to allow.`,
      { href: authorize.href, label: `Continue to ${host}` },
    );
  }

  private async callback(req: http.IncomingMessage): Promise<PageAnswer> {
    if (req.method !== 'GET') return page(405, 'Method not allowed', 'Start again from the link Sluice gave you.');
    const query = queryOf(req);
    const state = query.get('state') ?? '';
    const unknown = page(
      400,
      'This sign-in is not valid',
      'It expired, was already used, was replaced by a newer sign-in, or was not started here. Call the tool again to get a new link.',
    );
    if (!RANDOM_VALUE.test(state)) return unknown;
    const key = stateKey(state);
    const started = await this.store.get<Started>(key);
    // Single use, whatever comes next: a replayed or swapped callback finds nothing.
    if (started === undefined || !(await this.store.delete(key))) return unknown;
    const grants = this.upstreams.get(started.upstream);
    if (grants === undefined) return unknown;
    const refused = query.get('error');
    if (refused !== null)
      return page(400, 'Not connected', `The sign-in at upstream “${started.upstream}” was declined or failed.`);
    const code = query.get('code') ?? '';
    if (code === '' || code.length > MAX_CODE_CHARS) return unknown;
    const target = await grants.client.discover();
    const iss = query.get('iss');
    // RFC 9207: the response names who issued it; a mix-up answer is refused.
    if ((iss !== null || target.issuerInResponses === true) && !sameIssuer(iss, target.issuer)) return unknown;
    try {
      await grants.complete(started.subject, code, started.verifier, started.redirectUri);
    } catch (error) {
      if (!isUpstreamAuthError(error)) throw error;
      this.logger.warn(
        { event: 'upstream.consent_refused', upstream: started.upstream, subject: started.subject },
        'the authorization server refused a consent callback',
      );
      return page(
        400,
        'Not connected',
        `The authorization server of upstream “${started.upstream}” refused the sign-in. Call the tool again to get a new link.`,
      );
    }
    this.logger.info(
      { event: 'upstream.connected', upstream: started.upstream, subject: started.subject },
      `a caller connected their account at upstream "${started.upstream}"`,
    );
    await this.completed(started.elicitationId);
    return page(
      200,
      'Connected',
      `Your account at upstream “${started.upstream}” is connected. You may close this window and go back to your conversation.`,
    );
  }
}

/** Whose links and sign-ins these are: one caller at one upstream. */
function callerOf(ticket: Ticket): string {
  return `${ticket.upstream}\n${ticket.subject}`;
}

/** The elicitation ids of a URL elicitation error (-32042), whether the SDK or core built it. */
function urlElicitationIds(error: unknown): string[] {
  if (!isRpcError(error) || error.code !== (ProtocolErrorCode.UrlElicitationRequired as number)) return [];
  const elicitations = (error.data as { elicitations?: unknown } | undefined)?.elicitations;
  if (!Array.isArray(elicitations)) return [];
  return elicitations
    .map((e: unknown) => (e as { elicitationId?: unknown } | null)?.elicitationId)
    .filter((id): id is string => typeof id === 'string');
}

interface PageAnswer {
  readonly status: number;
  readonly html: string;
}

function queryOf(req: http.IncomingMessage): URLSearchParams {
  return new URL(req.url ?? '/', 'http://localhost').searchParams;
}

function sameIssuer(iss: string | null, issuer: string | undefined): boolean {
  if (iss === null || issuer === undefined || iss.length > MAX_ISSUER_CHARS) return false;
  return iss.replace(/\/$/, '') === issuer.replace(/\/$/, '');
}

function page(status: number, title: string, text: string, link?: { href: string; label: string }): PageAnswer {
  const action =
    link === undefined ? '' : `<p><a id="continue" href="${escape(link.href)}">${escape(link.label)}</a></p>`;
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<meta name="viewport" content="width=device-width"><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}</style></head>
<body><h1>${escape(title)}</h1><p>${escape(text)}</p>${action}</body></html>`;
  return { status, html };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
