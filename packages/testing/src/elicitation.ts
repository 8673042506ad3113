import { ProtocolErrorCode } from '@modelcontextprotocol/client';

/** A URL elicitation a refused request asked the client to follow. */
export interface UrlElicitation {
  readonly url: string;
  readonly elicitationId: string;
  readonly message?: string;
}

/**
 * The first URL elicitation of a request refused with `UrlElicitationRequired`
 * (-32042), as a `per_user` upstream refuses a caller it holds no grant for.
 * Rejects, saying what happened instead, when the request succeeded, failed
 * otherwise, or named no elicitation.
 */
export async function urlElicitationOf(request: Promise<unknown>): Promise<UrlElicitation> {
  const outcome = await request.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome))
    throw new Error(`expected a URL elicitation, got a result: ${JSON.stringify(outcome.result).slice(0, 300)}`);
  const error = outcome.error as { code?: unknown; data?: { elicitations?: unknown } } | null;
  if (error?.code !== ProtocolErrorCode.UrlElicitationRequired)
    throw new Error(`expected a URL elicitation (-32042), got ${String(outcome.error)}`, { cause: outcome.error });
  const listed = Array.isArray(error.data?.elicitations) ? (error.data.elicitations as unknown[]) : [];
  const elicitation = listed.find((e) => {
    const mode = (e as { mode?: unknown } | null)?.mode;
    return mode === undefined || mode === 'url';
  }) as Partial<UrlElicitation> | undefined;
  if (typeof elicitation?.url !== 'string' || typeof elicitation.elicitationId !== 'string')
    throw new Error('the -32042 error names no URL elicitation', { cause: outcome.error });
  return { url: elicitation.url, elicitationId: elicitation.elicitationId, message: elicitation.message };
}
