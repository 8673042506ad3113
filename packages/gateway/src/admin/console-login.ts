import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AuthInfo, Logger, Store } from '@sluice/core';
import type { RouteRequest } from '@sluice/http';
import { operatorOf } from './caller.js';
import { ConsoleSessions, SESSION_COOKIE, csrfMatches, key as cookieKey, keyOf } from './console-sessions.js';
import { SharedLogins } from './console-shared.js';
import type { ConsoleSession, SessionLimits } from './console-sessions.js';
import { esc, sendPage } from './html.js';
import { HttpProblem, allow, fieldsOf, readBody, stringField } from './http-io.js';
import { LoginThrottle } from './login-throttle.js';

/**
 * Checks an `Authorization` value as the listener does: the caller, undefined without auth, false when refused.
 * `address` is the client's, for the listener's guess throttle.
 */
export type Authenticate = (authorization: string, address?: string) => Promise<AuthInfo | undefined | false>;

export interface ConsoleLoginOptions {
  /** Whether the listener authenticates (`apiKeys` or `oauth`); without, the console needs no login. */
  readonly required: boolean;
  readonly authenticate: Authenticate;
  /**
   * Whether an `Authorization` value passes the listener's guess throttle (a key or token too random to guess):
   * it passes the failed-login limit too.
   */
  readonly passesGuessThrottle: (authorization: string) => boolean;
  /** The scopes the admin surface demands. */
  readonly scopes: readonly string[];
  readonly session: SessionLimits & {
    readonly secureCookie: boolean;
    readonly maxFailures: number;
    readonly failureWindowMs: number;
  };
  readonly logger: Logger;
  readonly now?: () => number;
  /** A store with a message bus (Redis) shares logins with every replica; without, they live on this one. */
  readonly store?: Store;
}

/**
 * How a browser reaches the console on an authenticated listener without a
 * proxy adding the header: a login form that takes the admin API key (or a
 * bearer token), checks it as the listener checks a header, with the admin
 * surface's scopes, and answers with a session cookie (HttpOnly,
 * SameSite=Strict, Path=/console; Secure over TLS or when configured). The key
 * itself is never kept. Failed logins are limited per client address; forms
 * that change something carry the session's token.
 */
export class ConsoleLogin {
  private readonly sessions: ConsoleSessions;
  private readonly shared: SharedLogins | undefined;
  private readonly throttle: LoginThrottle;
  private readonly bySession = new WeakMap<IncomingMessage, ConsoleSession>();

  constructor(
    private readonly base: string,
    private readonly options: ConsoleLoginOptions,
  ) {
    this.sessions = new ConsoleSessions(options.session, options.now);
    const store = options.store;
    this.shared =
      store?.messages === undefined
        ? undefined
        : new SharedLogins(store, store.messages, this.sessions, options.session, options.logger, options.now);
    this.throttle = new LoginThrottle(
      { maxFailures: options.session.maxFailures, windowMs: options.session.failureWindowMs },
      options.now,
    );
  }

  /** The session a request came with, once `guard` let it in by its cookie. */
  sessionOf(req: IncomingMessage): ConsoleSession | undefined {
    return this.bySession.get(req);
  }

  /**
   * Lets a console request through with the listener's `Authorization`
   * header, or else with a live session cookie; sends a browser that has
   * neither to the login page.
   */
  guard(route: RequestListener): RequestListener {
    return (req, res) => {
      this.admit(req as RouteRequest, res).then(
        (admitted) => {
          if (admitted) route(req, res);
        },
        (error: unknown) => {
          this.options.logger.error({ event: 'admin.failed', err: error, path: req.url }, 'a console request failed');
          if (!res.headersSent) this.refuse(res, 500, 'internal error: see the gateway log');
          else res.end();
        },
      );
    };
  }

  /**
   * A form that changes something must carry the session's token when it
   * came with a session cookie. Without a session (a listener without
   * `auth`) there is no token: a browser's form then must name its origin
   * (`Origin`, which the listener checks, or `Sec-Fetch-Site: same-origin`),
   * unless the request carries its own `Authorization`, which no other
   * site's page can make a browser send.
   */
  checkForm(req: IncomingMessage, fields: Record<string, unknown>): void {
    const session = this.sessionOf(req);
    if (session !== undefined && !csrfMatches(session, stringField(fields, 'csrf')))
      throw new HttpProblem(403, 'the form is not from this session: reload the page and try again');
    const sameOrigin = req.headers.origin !== undefined || req.headers['sec-fetch-site'] === 'same-origin';
    if (session === undefined && req.headers.authorization === undefined && !sameOrigin)
      throw new HttpProblem(403, 'the form names no origin: send it from the console page');
  }

  /** `/console/login` (the form and its post) and `/console/logout`. */
  routes(): Record<string, RequestListener> {
    return {
      [`${this.base}/login`]: (req, res) => {
        this.login(req, res).catch((error: unknown) => {
          const status = error instanceof HttpProblem ? error.status : 500;
          if (status >= 500)
            this.options.logger.error({ event: 'admin.failed', err: error, path: req.url }, 'a console login failed');
          if (res.headersSent) res.end();
          else this.loginPage(res, status, error instanceof HttpProblem ? error.message : 'internal error');
        });
      },
      [`${this.base}/logout`]: this.guard((req, res) => {
        const done = async (): Promise<void> => {
          allow(req, ['POST']);
          this.checkForm(req, fieldsOf(await readBody(req), req.headers['content-type']));
          this.sessions.end(req);
          await this.shared?.end(req);
          res.writeHead(303, {
            location: `${this.base}/login`,
            'cache-control': 'no-store',
            'set-cookie': this.cookie(req, '', 0),
          });
          res.end();
        };
        done().catch((error: unknown) => {
          if (res.headersSent) res.end();
          else this.refuse(res, error instanceof HttpProblem ? error.status : 500, messageOf(error));
        });
      }),
    };
  }

  private async admit(req: RouteRequest, res: ServerResponse): Promise<boolean> {
    if (!this.options.required) return true;
    const header = req.headers.authorization;
    if (header !== undefined) {
      const verdict = await this.options.authenticate(header, req.socket.remoteAddress);
      if (verdict === false) {
        this.refuse(res, 401, 'the Authorization header was refused');
        return false;
      }
      if (verdict !== undefined) req.auth = verdict;
      return true;
    }
    const session = await this.sessionFor(req);
    if (session !== undefined) {
      req.auth = session.auth;
      this.bySession.set(req, session);
      return true;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.writeHead(303, { location: `${this.base}/login`, 'cache-control': 'no-store' });
      res.end();
      return false;
    }
    this.refuse(res, 401, 'log in first');
    return false;
  }

  /** The login a request's cookie names: this replica's, or one another replica made (read from the store once). */
  private async sessionFor(req: IncomingMessage): Promise<ConsoleSession | undefined> {
    const here = this.sessions.of(req);
    if (here === undefined) return this.shared?.lookup(req);
    if (this.shared === undefined) return here;
    // A logout made on another replica whose word never came here ends this copy too.
    if (!(await this.shared.live(keyOf(req)))) return undefined;
    void this.shared.remember(keyOf(req), here, false);
    return here;
  }

  private async login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    allow(req, ['GET', 'HEAD', 'POST']);
    if (!this.options.required || (await this.sessionFor(req)) !== undefined) {
      res.writeHead(303, { location: `${this.base}/tools`, 'cache-control': 'no-store' });
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      this.loginPage(res, 200);
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    const key = stringField(fieldsOf(await readBody(req), req.headers['content-type']), 'key') ?? '';
    // Others failing at this address do not lock out a key too random to guess; a guessable one waits with them.
    const waitMs = key !== '' && this.options.passesGuessThrottle(`Bearer ${key}`) ? 0 : this.throttle.waitMs(address);
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1_000);
      this.options.logger.warn({ event: 'admin.login_throttled', address }, 'console logins refused for a while');
      this.loginPage(res, 429, `Too many failed logins: try again in ${seconds} s.`, { 'retry-after': `${seconds}` });
      return;
    }
    const verdict = key === '' ? false : await this.options.authenticate(`Bearer ${key}`, address);
    if (!verdict) {
      this.throttle.fail(address);
      this.options.logger.warn({ event: 'admin.login_failed', address }, 'a console login was refused');
      this.loginPage(res, 401, 'That key or token was refused.');
      return;
    }
    let operator: string;
    try {
      operator = operatorOf(verdict, this.options.scopes);
    } catch (error) {
      this.throttle.fail(address);
      throw error;
    }
    this.throttle.succeed(address);
    const { id, session } = this.sessions.create(verdict);
    await this.shared?.remember(cookieKey(id), session, true);
    const now = (this.options.now ?? Date.now)();
    this.options.logger.info({ event: 'admin.login', operator }, `${operator} logged in to the console`);
    res.writeHead(303, {
      location: `${this.base}/tools`,
      'cache-control': 'no-store',
      'set-cookie': this.cookie(req, id, Math.max(1, Math.floor((session.expiresAt - now) / 1_000))),
    });
    res.end();
  }

  private cookie(req: IncomingMessage, value: string, maxAgeSeconds: number): string {
    const secure = this.options.session.secureCookie || (req.socket as Partial<TLSSocket>).encrypted === true;
    return `${SESSION_COOKIE}=${value}; Path=${this.base}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
  }

  private loginPage(res: ServerResponse, status: number, problem?: string, headers: Record<string, string> = {}): void {
    const note = problem === undefined ? '' : `<p class="note">${esc(problem)}</p>`;
    const form = `${note}<form class="login" method="post" action="${esc(`${this.base}/login`)}">
<label for="key">Admin API key or bearer token</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button></form>`;
    sendPage(res, this.base, '', 'Log in', form, { status, nav: false, headers });
  }

  private refuse(res: ServerResponse, status: number, message: string): void {
    sendPage(
      res,
      this.base,
      '',
      'Refused',
      `<p class="note">${esc(message)}</p><p><a href="${esc(`${this.base}/login`)}">Log in</a></p>`,
      { status, nav: false },
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof HttpProblem ? error.message : 'internal error: see the gateway log';
}
