import { readBounded } from '@sluice/core/internal';
import { UpstreamAuthError } from './errors.js';

/** A token answer is small; a larger one is refused unread. */
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
/** The longest error description repeated in a message. */
const MAX_DESCRIPTION = 200;
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** Form fields that carry a credential: an answer that repeats one never shows it. */
const SECRET_FIELDS = ['subject_token', 'actor_token', 'refresh_token', 'code', 'code_verifier', 'client_secret'];

export interface IssuedToken {
  readonly accessToken: string;
  /** Lifetime in seconds, when the server says. */
  readonly expiresIn: number | undefined;
  /** A refresh token, when the server issued one (authorization code and refresh grants). */
  readonly refreshToken?: string | undefined;
}

export interface TokenRequest {
  readonly upstream: string;
  readonly endpoint: string;
  readonly form: Readonly<Record<string, string>>;
  readonly client: {
    readonly id: string;
    readonly secret: string;
    readonly method: 'client_secret_basic' | 'client_secret_post';
  };
  readonly timeoutMs: number;
}

/** Posts a token request (RFC 6749 section 3.2) and reads its answer, bounded in time and size. */
export async function requestToken(request: TokenRequest): Promise<IssuedToken> {
  const { upstream, endpoint, client } = request;
  const form = new URLSearchParams(request.form);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.method === 'client_secret_basic') {
    // Each part form-encoded first (RFC 6749 section 2.3.1).
    const pair = `${formEncode(client.id)}:${formEncode(client.secret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    form.set('client_id', client.id);
    form.set('client_secret', client.secret);
  }
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw new UpstreamAuthError(
      upstream,
      `The token endpoint of upstream "${upstream}" ${timedOut ? `did not answer within ${request.timeoutMs} ms` : 'could not be reached'}`,
      'Try again later; if it persists, check the authorization server.',
    );
  }
  const body = await readJson(response);
  if (!response.ok) {
    const code = typeof body?.error === 'string' ? oneLine(body.error).slice(0, 64) : `HTTP ${response.status}`;
    const secrets = [client.secret, ...SECRET_FIELDS.map((field) => request.form[field])];
    const described =
      typeof body?.error_description === 'string'
        ? `: ${redact(oneLine(body.error_description), secrets).slice(0, MAX_DESCRIPTION)}`
        : '';
    const exchange = request.form.grant_type === TOKEN_EXCHANGE;
    throw new UpstreamAuthError(
      upstream,
      exchange
        ? `The authorization server refused to exchange the caller's token for upstream "${upstream}" (${code}${described})`
        : `The authorization server refused a token for upstream "${upstream}" (${code}${described})`,
      refusalSuggestion(code, exchange),
      code,
    );
  }
  const token = body?.access_token;
  const type = body?.token_type;
  if (typeof token !== 'string' || token === '' || typeof type !== 'string' || type.toLowerCase() !== 'bearer')
    throw new UpstreamAuthError(
      upstream,
      `The token endpoint of upstream "${upstream}" answered without a bearer access token`,
      'Check the authorization server.',
    );
  const expiresIn = body?.expires_in;
  const refreshToken = body?.refresh_token;
  return {
    accessToken: token,
    expiresIn: typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined,
    ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
  };
}

function refusalSuggestion(code: string, exchange: boolean): string {
  if (code === 'invalid_client') return "Check the gateway's client id and secret for this upstream.";
  if (exchange && (code === 'invalid_grant' || code === 'unauthorized_client'))
    return "Call again with a token that the authorization server lets this gateway exchange (valid, and whose `may_act`, when present, names the gateway's client); if every caller is refused, check that the authorization server allows the gateway's client to exchange tokens.";
  return "Check this upstream's `auth` settings (scope, resource) against the authorization server.";
}

/** Control characters become spaces: an answer cannot forge lines of a message or log. */
// eslint-disable-next-line no-control-regex
const oneLine = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');

/** Every credential the request sent, replaced wherever the answer repeats it. */
function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let redacted = text;
  for (const secret of secrets)
    if (secret !== undefined && secret !== '') redacted = redacted.split(secret).join('[redacted]');
  return redacted;
}

async function readJson(response: Response): Promise<Record<string, unknown> | undefined> {
  const body = await readBounded(response, MAX_TOKEN_RESPONSE_BYTES);
  if (body === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const formEncode = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);
