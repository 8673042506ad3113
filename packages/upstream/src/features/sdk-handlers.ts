// Type-only from the client package: a server without upstreams never loads it. The SDK's error classes are
// brand-matched, so the server package's match the errors the client raises.
import type { Client, RequestOptions } from '@modelcontextprotocol/client';
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  SdkError,
  SdkErrorCode,
  UriTemplate,
} from '@modelcontextprotocol/server';
import type {
  CompleteRequestParams,
  CompleteResult,
  GetPromptResult,
  InputRequiredResult,
  ReadResourceResult,
  Server,
  ServerCapabilities,
  ServerContext,
} from '@modelcontextprotocol/server';
import { isModernCaller, roundParams, sealed, withoutConnectAnswer } from '../modern-call.js';
import type { RoundStateSeal } from '../round-state.js';
import type { LogLevel } from '@sluice/core/internal';
import { CoreErrorCode, SluiceError, messageOf } from '@sluice/core';
import { budgetedRequest } from '../budgeted-request.js';
import { upstreamFailure } from '../errors.js';
import { identityOf } from '@sluice/core';
import type { FeatureRequests, Meta, RequestContext, Transport } from '@sluice/core';
import type { Logger } from '@sluice/core';
import { isRpcError, toPlainMeta, toProtocolError } from '@sluice/core/internal';
import { headersOf } from '@sluice/core/internal';
import type { FeatureCatalog, FeatureLink } from './catalog.js';
import { accessRefusal, featureRequest, requestedUri } from '@sluice/core/internal';
import type { ListenCaller } from '@sluice/core/internal';
import type { FeatureContext, FeatureMethod } from '@sluice/core';
import type { FeatureGuards } from '@sluice/core/internal';
import { pageOf } from './paging.js';
import { guardedRunner, refusalError } from '@sluice/core/internal';
import {
  connectDeclined,
  connectElicitation,
  connectRound,
  isUpstreamAuthError,
  isUpstreamConnectRequired,
} from '../oauth/errors.js';
import type { UpstreamConnectRequired } from '../oauth/errors.js';
import { levelOf, setLevel, setSessionLevel, subscribe, unsubscribe } from '@sluice/core/internal';

export interface FeatureServing {
  readonly catalog: FeatureCatalog;
  readonly logger: Logger;
  readonly transport: Transport;
  readonly guards?: FeatureGuards;
  /** The server's watch of answers for consent links (`ServerUpstreams.watchConsent`), with `per_user` upstreams. */
  readonly watchConsent?: (<T>(sdk: Server, answer: Promise<T>) => Promise<T>) | undefined;
}

/**
 * Serves what the catalog holds on one SDK server: resources, templates,
 * subscriptions, prompts, completion and logging, each advertised only when
 * some upstream provides it. A method a local `extendSdk()` registration
 * already serves is left to it.
 */
export function serveFeatures(sdk: Server, serving: FeatureServing): void {
  const { catalog } = serving;
  const caps: ServerCapabilities = catalog.capabilities();
  if (Object.keys(caps).length === 0) return;
  const { guards } = serving;
  // With no request path for features, a request builds no hook context at all (an unused hook costs nothing).
  const hooked = hookedOf(guards);
  const guarded = guardedRunner(guards);
  const contextOf = (method: FeatureMethod, ctx: ServerContext): FeatureContext | undefined =>
    hooked ? featureContext(serving, method, ctx) : undefined;
  const visibleTo = (method: FeatureMethod, ctx: ServerContext) => {
    const access = guards?.access;
    if (access === undefined) return everything;
    const base = featureContext(serving, method, ctx);
    return (upstream: string, target: string) => accessRefusal(guards, { ...base, upstream, target }) === undefined;
  };
  // What a client is answered, watched for a consent link (-32042) as a tool call's answer is.
  const { watchConsent } = serving;
  const answered = <T>(answer: Promise<T>): Promise<T> =>
    watchConsent === undefined ? answer : watchConsent(sdk, answer);
  const free = (method: string): boolean => {
    try {
      sdk.assertCanSetRequestHandler(method);
      return true;
    } catch {
      serving.logger.warn(
        { event: 'gateway.feature_shadowed', method },
        `a local registration serves ${method}; upstream ones are not merged into it`,
      );
      return false;
    }
  };
  // Asked before the capabilities are registered: registering logging makes the SDK server set a
  // logging/setLevel handler of its own, which would keep the level from Sluice (and from the upstreams).
  const loggingFree = caps.logging !== undefined && free('logging/setLevel');
  sdk.registerCapabilities(caps);
  if (loggingFree) sdk.removeRequestHandler('logging/setLevel');

  if (caps.resources) {
    if (free('resources/list'))
      sdk.setRequestHandler('resources/list', (request, ctx) => {
        const page = pageOf('resources', catalog.resources(visibleTo('resources/list', ctx)), request.params?.cursor);
        return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      });
    if (free('resources/templates/list'))
      sdk.setRequestHandler('resources/templates/list', (request, ctx) => {
        const page = pageOf(
          'templates',
          catalog.templates(visibleTo('resources/templates/list', ctx)),
          request.params?.cursor,
        );
        return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      });
    if (free('resources/read'))
      sdk.setRequestHandler('resources/read', (request, ctx) =>
        answered(readResource(serving, guarded, request.params.uri, ctx)),
      );
    if (caps.resources.subscribe) {
      const held = new HeldSubscriptions(sdk, catalog);
      if (free('resources/subscribe'))
        sdk.setRequestHandler('resources/subscribe', async (request, ctx) => {
          const uri = requestedUri(request.params.uri);
          const fctx = contextOf('resources/subscribe', ctx);
          const link = owned(catalog.resourceOwner(uri), uri);
          const item = { target: uri, meta: ctx.mcpReq._meta };
          return guarded('resources/subscribe', link.name, fctx, ctx.mcpReq.signal, item, async (request) => {
            // Asked only once the request path admitted the caller: a resource hidden from it reads as not found.
            assertSubscribable(catalog, link, uri);
            // Counted once per client and URI, so that a repeated subscribe does not pin the upstream's.
            if (!subscribe(sdk, uri)) return {};
            held.watch();
            const meta = sentMeta(request);
            await guard(link, () => catalog.subscribe(link, uri, meta)).catch((error: unknown) => {
              // Not subscribed upstream, so not subscribed here either.
              unsubscribe(sdk, uri);
              throw error;
            });
            held.add(uri, link);
            return {};
          });
        });
      if (free('resources/unsubscribe'))
        sdk.setRequestHandler('resources/unsubscribe', async (request, ctx) => {
          const uri = requestedUri(request.params.uri);
          const fctx = contextOf('resources/unsubscribe', ctx);
          const link = owned(catalog.resourceOwner(uri), uri);
          const item = { target: uri, meta: ctx.mcpReq._meta };
          return guarded('resources/unsubscribe', link.name, fctx, ctx.mcpReq.signal, item, async (request) => {
            if (!unsubscribe(sdk, uri)) return {};
            held.delete(uri);
            const meta = sentMeta(request);
            await guard(link, () => catalog.unsubscribe(link, uri, meta));
            return {};
          });
        });
    }
  }

  if (caps.prompts) {
    if (free('prompts/list'))
      sdk.setRequestHandler('prompts/list', (request, ctx) => {
        const page = pageOf('prompts', catalog.prompts(visibleTo('prompts/list', ctx)), request.params?.cursor);
        return { prompts: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      });
    if (free('prompts/get'))
      sdk.setRequestHandler('prompts/get', (request, ctx) =>
        answered(getPrompt(serving, guarded, request.params.name, request.params.arguments, ctx)),
      );
  }

  if (caps.completions && free('completion/complete'))
    sdk.setRequestHandler('completion/complete', (request, ctx) =>
      answered(complete(serving, guarded, request.params, ctx)),
    );

  if (loggingFree)
    sdk.setRequestHandler('logging/setLevel', async (request, ctx) => {
      const level: LogLevel = request.params.level;
      // Refused: neither the client's level nor any upstream's changes.
      const upstreams = await levelAdmitted(catalog, guarded, contextOf('logging/setLevel', ctx), level, ctx);
      if (levelOf(sdk) === undefined) whenClosed(sdk, () => catalog.clientLeft(sdk));
      setLevel(sdk, level);
      setSessionLevel(ctx.sessionId, level);
      catalog.levelRequested(sdk, level, upstreams);
      return {};
    });
}

/**
 * The upstreams a `logging/setLevel` may set: it runs the request path once
 * per upstream that logs (`{ kind: 'logging/setLevel', upstream }`, the level
 * as its target), and each upstream whose path admits it is set. When none
 * admits it, the first refusal is the client's answer. An upstream a tap
 * hides (`NOT_FOUND`) is left out as one that does not log: when every one is
 * hidden, the level is the client's own, as on a gateway with no upstream
 * that logs.
 */
async function levelAdmitted(
  catalog: FeatureCatalog,
  guarded: ReturnType<typeof guardedRunner>,
  fctx: FeatureContext | undefined,
  level: LogLevel,
  ctx: ServerContext,
): Promise<string[]> {
  const names = catalog.loggingUpstreams();
  if (fctx === undefined) return names;
  const item = { target: level, meta: ctx.mcpReq._meta };
  const outcomes = await Promise.allSettled(
    names.map((name) => guarded('logging/setLevel', name, fctx, ctx.mcpReq.signal, item, () => Promise.resolve(name))),
  );
  const admitted: string[] = [];
  let refused: Error | undefined;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') admitted.push(outcome.value);
    // The path's errors are JSON-RPC errors for the client (a refusal's, a guard's), thrown as they come.
    else if (!hidesUpstream(outcome.reason)) refused ??= outcome.reason as Error;
  }
  if (admitted.length === 0 && refused !== undefined) throw refused;
  return admitted;
}

/** Whether a request path's refusal hides the upstream (`NOT_FOUND`) rather than refusing the request. */
function hidesUpstream(error: unknown): boolean {
  return isRpcError(error) && (error.data as { code?: unknown } | undefined)?.code === CoreErrorCode.NOT_FOUND;
}

/**
 * Admits the resource URIs of a 2026-07-28 `subscriptions/listen` filter, or
 * throws the error the client gets. Each URI meets what a 2025-11-25
 * `resources/subscribe` of it meets: the canonical spelling, the upstream's
 * deny globs (a denied URI is not found), and the request path of
 * `resources/subscribe` (so authz refuses it with `FORBIDDEN`).
 * Answers the URIs in their canonical spelling, the one change notifications
 * name.
 */
export async function admitListen(
  serving: FeatureServing,
  uris: readonly string[],
  caller: ListenCaller,
): Promise<string[]> {
  const { catalog, guards } = serving;
  const hooked = hookedOf(guards);
  const guarded = guardedRunner(guards);
  const admitted: string[] = [];
  for (const requested of uris) {
    const uri = requestedUri(requested);
    const fctx = hooked
      ? featureRequest('resources/subscribe', caller.authInfo, caller.headers, serving.transport, serving.logger)
      : undefined;
    const link = owned(catalog.resourceOwner(uri), uri);
    // As in `resources/subscribe`: whether it offers subscriptions is told only to a caller the request path admits.
    await guarded('resources/subscribe', link.name, fctx, caller.signal, { target: uri }, () => {
      assertSubscribable(catalog, link, uri);
      return Promise.resolve({});
    });
    admitted.push(uri);
  }
  return admitted;
}

/** The log level one client of a gateway asked for, if it asked. */
export { levelOf };

/** Throws -32602 when the upstream that owns `uri` does not offer subscriptions. */
function assertSubscribable(catalog: FeatureCatalog, link: FeatureLink, uri: string): void {
  if (!catalog.canSubscribe(link))
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource "${uri}" does not offer subscriptions`);
}

/**
 * The upstream subscriptions one client holds, given back when its SDK server
 * closes (its session ended, was evicted or expired): the catalog counts
 * every client's subscription to a URI, and the last one given back
 * unsubscribes the upstream.
 */
class HeldSubscriptions {
  private readonly held = new Map<string, FeatureLink>();
  private watching = false;
  private closed = false;

  constructor(
    private readonly sdk: Server,
    private readonly catalog: FeatureCatalog,
  ) {}

  /** Watches for the close, from the client's first subscribe on: by then its transport's owner has connected it. */
  watch(): void {
    if (this.watching) return;
    this.watching = true;
    whenClosed(this.sdk, () => {
      this.closed = true;
      for (const [uri, link] of this.held) this.giveBack(link, uri);
      this.held.clear();
    });
  }

  /** Subscribed upstream; if the client closed meanwhile, given back at once. */
  add(uri: string, link: FeatureLink): void {
    if (this.closed) this.giveBack(link, uri);
    else this.held.set(uri, link);
  }

  delete(uri: string): void {
    this.held.delete(uri);
  }

  private giveBack(link: FeatureLink, uri: string): void {
    // Nobody waits for it: an upstream that is away was unsubscribed with its connection.
    void this.catalog.unsubscribe(link, uri).catch(() => {});
  }
}

/** Runs `then` when a connected SDK server closes, after whatever its transport's owner set to run then. */
function whenClosed(sdk: Server, then: () => void): void {
  const prior = sdk.onclose;
  sdk.onclose = () => {
    prior?.();
    then();
  };
}

const everything = (): boolean => true;

/** Whether some plugin guards feature requests: else a request builds no hook context at all. */
function hookedOf(guards: FeatureGuards | undefined): boolean {
  return guards?.plan !== undefined;
}

/** `resources/read` as a client's request makes it: canonical URI, access, guards, the upstream, the result hook. */
async function readResource(
  serving: FeatureServing,
  guarded: ReturnType<typeof guardedRunner>,
  requested: string,
  ctx: ServerContext,
): Promise<ReadResourceResult> {
  const uri = requestedUri(requested);
  const fctx = hookedOf(serving.guards) ? featureContext(serving, 'resources/read', ctx) : undefined;
  const link = owned(serving.catalog.resourceOwner(uri), uri);
  const item = { target: uri, meta: ctx.mcpReq._meta };
  const result = await guarded('resources/read', link.name, fctx, ctx.mcpReq.signal, item, (request) =>
    relay(
      link,
      (client, options, fields) =>
        // request() rather than readResource(): the same validation without the client's response cache,
        // which a gateway never serves from (each read is the upstream's answer now).
        client.request(
          { method: 'resources/read', params: { uri, ...fields } },
          options,
        ) as Promise<ReadResourceResult>,
      ctx,
      request,
      `resource:${uri}`,
    ),
  );
  return result;
}

/** `prompts/get` as a client's request makes it: access, guards, the upstream, the result hook. */
async function getPrompt(
  serving: FeatureServing,
  guarded: ReturnType<typeof guardedRunner>,
  name: string,
  args: Record<string, string> | undefined,
  ctx: ServerContext,
): Promise<GetPromptResult> {
  const route = serving.catalog.prompt(name);
  const fctx = hookedOf(serving.guards) ? featureContext(serving, 'prompts/get', ctx) : undefined;
  if (route === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt "${name}" not found`);
  const item = { target: name, meta: ctx.mcpReq._meta };
  const result = await guarded('prompts/get', route.link.name, fctx, ctx.mcpReq.signal, item, (request) =>
    relay(
      route.link,
      (client, options, fields) =>
        client.request(
          {
            method: 'prompts/get',
            params: { name: route.original, ...(args ? { arguments: args } : {}), ...fields },
          },
          options,
        ) as Promise<GetPromptResult>,
      ctx,
      request,
      `prompt:${route.original}`,
    ),
  );
  return result;
}

/** `completion/complete` as a client's request makes it: the prompt or resource's owner, access, guards, the upstream. */
async function complete(
  serving: FeatureServing,
  guarded: ReturnType<typeof guardedRunner>,
  requested: CompleteRequestParams,
  ctx: ServerContext,
): Promise<CompleteResult> {
  const { catalog } = serving;
  const fctx = hookedOf(serving.guards) ? featureContext(serving, 'completion/complete', ctx) : undefined;
  const { ref } = requested;
  const meta = ctx.mcpReq._meta;
  // The client's `_meta` is the request context's `meta`, not relayed as it came: `outgoingMeta` goes upstream.
  const relayed = withoutMeta(requested);
  if (ref.type === 'ref/prompt') {
    const route = catalog.prompt(ref.name);
    if (route === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt "${ref.name}" not found`);
    const params = { ...relayed, ref: { ...ref, name: route.original } };
    return guarded(
      'completion/complete',
      route.link.name,
      fctx,
      ctx.mcpReq.signal,
      { target: ref.name, completing: 'prompt', meta },
      (request) =>
        relay(
          route.link,
          (client, options, fields) => client.complete({ ...params, ...fields }, options),
          ctx,
          request,
        ),
    );
  }
  // A template is named as listed; a URI is named in its canonical spelling, which the deny globs see.
  const uri = UriTemplate.isTemplate(ref.uri) ? ref.uri : requestedUri(ref.uri);
  const link = owned(catalog.templateOwner(uri) ?? catalog.resourceOwner(uri), uri);
  const params = uri === ref.uri ? relayed : { ...relayed, ref: { ...ref, uri } };
  const completed = await guarded(
    'completion/complete',
    link.name,
    fctx,
    ctx.mcpReq.signal,
    { target: uri, completing: 'resource', meta },
    (request) =>
      relay(link, (client, options, fields) => client.complete({ ...params, ...fields }, options), ctx, request),
  );
  return UriTemplate.isTemplate(uri) ? readableCompletions(serving, link, uri, requested, completed, ctx) : completed;
}

/**
 * A template's completions that name a resource the caller may read: each
 * value is put in the template (with the arguments the client has already
 * chosen) and the URI it makes must be one no deny glob, refusal or
 * `listFeatures` tap keeps from this caller, as its `resources/list` would.
 * Otherwise completing an allowed template would spell out denied paths.
 * When any value is left out, so are `total` and `hasMore`: they count what
 * the upstream found, and the values it did not send may all be hidden, so a
 * `hasMore` after every value was left out would tell the caller that hidden
 * paths exist. Such an answer says only what its values say.
 */
function readableCompletions(
  serving: FeatureServing,
  link: FeatureLink,
  template: string,
  requested: CompleteRequestParams,
  completed: CompleteResult,
  ctx: ServerContext,
): CompleteResult {
  const { values } = completed.completion;
  if (values.length === 0) return completed;
  // Only a template this upstream lists says what its values name: a client's own template (`file:///public/{+path}`)
  // would put whatever the upstream completes under a path of the client's choosing.
  if (serving.catalog.templateOwner(template)?.name !== link.name) return { ...completed, completion: { values: [] } };
  const access = serving.guards?.access === undefined ? undefined : featureContext(serving, 'resources/read', ctx);
  const expander = new UriTemplate(template);
  const chosen = requested.context?.arguments ?? {};
  const readable = values.filter((value) => {
    let uri: string;
    try {
      uri = requestedUri(expander.expand({ ...chosen, [requested.argument.name]: value }));
    } catch {
      return false;
    }
    if (serving.catalog.resourceOwner(uri)?.name !== link.name) return false;
    return (
      access === undefined ||
      accessRefusal(serving.guards, { ...access, upstream: link.name, target: uri }) === undefined
    );
  });
  if (readable.length === values.length) return completed;
  return { ...completed, completion: { values: readable } };
}

/** The resource reads and prompt gets of imported upstreams, registered under `Tokens.FeatureRequests`. */
export function featureRequests(serving: Omit<FeatureServing, 'transport'>): FeatureRequests {
  const guarded = guardedRunner(serving.guards);
  return {
    readResource: (uri, mcp, transport) => readResource({ ...serving, transport }, guarded, uri, mcp),
    getPrompt: (name, args, mcp, transport) => getPrompt({ ...serving, transport }, guarded, name, args, mcp),
  };
}

/** The hooks' view of one request; built only when a hook is tapped. */
function featureContext(serving: FeatureServing, method: FeatureMethod, ctx: ServerContext): FeatureContext {
  return featureRequest(method, ctx.http?.authInfo, headersOf(ctx), serving.transport, serving.logger);
}

/** A URI's owner; with none (a denied URI has none) the URI is not found. */
function owned(link: FeatureLink | undefined, uri: string): FeatureLink {
  if (link === undefined) throw new ResourceNotFoundError(uri);
  return link;
}

/**
 * What the gateway adds to the params of a request it relays: the request's
 * `outgoingMeta` (what `request` taps wrote) as `_meta`, and for a 2026-07-28
 * caller's round its answers, the upstream's state and the caller's
 * capabilities (in `_meta` too; a key both name is the tap's).
 */
interface RelayFields {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
  _meta?: Record<string, unknown>;
}

/** Sends one request on a client, with the fields the relay adds to its params (none: nothing to add). */
type Send<T> = (client: Client, options: RequestOptions, fields?: RelayFields) => Promise<T>;

/** The `_meta` a guarded request sends upstream: its `outgoingMeta`, when a tap wrote to it; undefined otherwise. */
function sentMeta(request: RequestContext | undefined): Meta | undefined {
  return request === undefined ? undefined : toPlainMeta(request.outgoingMeta);
}

/** The fields a request off the round path adds: only its `_meta`, if any. */
function plainFields(meta: Meta | undefined): RelayFields | undefined {
  return meta === undefined ? undefined : { _meta: meta };
}

/** Request params without their `_meta` (the same object when they have none). */
function withoutMeta<P extends { _meta?: unknown }>(params: P): Omit<P, '_meta'> {
  if (params._meta === undefined) return params;
  const copy = { ...params };
  delete copy._meta;
  return copy;
}

/**
 * Sends a request upstream with the caller's cancellation and the upstream's
 * timeout; its errors reach the client as the upstream gave them. A
 * 2026-07-28 caller's request that can be answered with input-required
 * (`target` names it) crosses the upstream's 2026-07-28 connection, and an
 * input-required answer comes back with the upstream's state sealed.
 */
function relay<T>(
  link: FeatureLink,
  send: Send<T>,
  ctx: ServerContext,
  request: RequestContext | undefined,
  target?: string,
): Promise<T> {
  const limit = request?.responseLimitBytes;
  const sent: Sent = { limit, meta: sentMeta(request) };
  const seal = link.roundSeal;
  const round =
    target !== undefined && seal !== undefined && link.modernLane !== undefined && isModernCaller(ctx)
      ? { target, seal }
      : undefined;
  // An upstream reached with each caller's own grant: the request travels on that caller's connection.
  const own = link.callerClient?.(identityOf(ctx.http?.authInfo), round !== undefined);
  if (own !== undefined) return relayOwn(link, own, send, ctx, sent, round);
  if (round !== undefined) return relayRound(link, send, ctx, round.target, round.seal, sent);
  const client = link.connected();
  if (client === undefined) return Promise.reject(unavailable(link));
  const options = { signal: ctx.mcpReq.signal, timeout: link.timeoutMs };
  const fields = plainFields(sent.meta);
  return within(link, client, limit, ctx, options, (o) => send(client, o, fields)).catch((error: unknown) => {
    throw forClient(link, error);
  });
}

/** What a guarded request carries to the upstream, on every path: the read limit a wrapper set, and its `_meta`. */
interface Sent {
  readonly limit: number | undefined;
  readonly meta: Meta | undefined;
}

/**
 * `relay` over the caller's own connection (`token_exchange`, `per_user`), never the gateway's; for a 2026-07-28
 * caller (`round`), a connection speaking 2026-07-28 when the upstream does, and the consent link as an
 * input-required round.
 */
async function relayOwn<T>(
  link: FeatureLink,
  own: Promise<Client>,
  send: Send<T>,
  ctx: ServerContext,
  sent: Sent,
  round: { readonly target: string; readonly seal: RoundStateSeal } | undefined,
): Promise<T> {
  let client: Client;
  try {
    client = await own;
  } catch (error) {
    if (round !== undefined && isUpstreamConnectRequired(error)) return connectAsRound(link, error, ctx) as T;
    throw callerConnectionError(link, error);
  }
  const options = { signal: ctx.mcpReq.signal, timeout: link.timeoutMs };
  try {
    if (round === undefined || client.getProtocolEra() !== 'modern') {
      const fields = plainFields(sent.meta);
      return await within(link, client, sent.limit, ctx, options, (o) => send(client, o, fields));
    }
    return await sendRound(link, client, send, ctx, round.target, round.seal, sent, options);
  } catch (error) {
    throw forClient(link, error);
  }
}

/** A 2026-07-28 caller without a grant: the consent link as an input-required round, or a refusal once declined. */
function connectAsRound(link: FeatureLink, error: UpstreamConnectRequired, ctx: ServerContext): InputRequiredResult {
  if (!connectDeclined(ctx.mcpReq.inputResponses)) return connectRound(link.name, error);
  throw new ProtocolError(
    ProtocolErrorCode.InternalError,
    `Upstream "${link.name}" acts with each caller's own account there, and the caller declined to connect one. Ask again to be asked once more.`,
    { code: CoreErrorCode.UPSTREAM_CONNECT_REQUIRED, upstream: link.name },
  );
}

/** The caller's connection could not be opened: a consent link to follow (-32042), or why their grant failed. */
function callerConnectionError(link: FeatureLink, error: unknown): Error {
  if (isUpstreamConnectRequired(error)) {
    const { message, data } = connectElicitation(link.name, error, 'ask again');
    return new ProtocolError(ProtocolErrorCode.UrlElicitationRequired, message, data);
  }
  if (isUpstreamAuthError(error))
    return new ProtocolError(ProtocolErrorCode.InternalError, `${error.detail}. ${error.suggestion}`, {
      code: CoreErrorCode.UPSTREAM_UNAUTHORIZED,
      upstream: link.name,
    });
  return forClient(link, error);
}

/** `relay` for a 2026-07-28 caller: over the upstream's 2026-07-28 lane, with the round's answers and sealed state. */
async function relayRound<T>(
  link: FeatureLink,
  send: Send<T>,
  ctx: ServerContext,
  target: string,
  seal: RoundStateSeal,
  sent: Sent,
): Promise<T> {
  const lane = await link.modernLane?.();
  const client = lane ?? link.connected();
  if (client === undefined) throw unavailable(link);
  const options: RequestOptions = { signal: ctx.mcpReq.signal, timeout: link.timeoutMs };
  try {
    if (lane === undefined) {
      const fields = plainFields(sent.meta);
      return await within(link, client, sent.limit, ctx, options, (o) => send(client, o, fields));
    }
    return await sendRound(link, client, send, ctx, target, seal, sent, options);
  } catch (error) {
    throw forClient(link, error);
  }
}

/**
 * One round on a 2026-07-28 connection: the caller's answers and the upstream's unsealed state go along, and
 * the request's `_meta` over the round's own (the caller's capabilities), as a tool call's goes; an
 * input-required answer comes back sealed.
 */
async function sendRound<T>(
  link: FeatureLink,
  client: Client,
  send: Send<T>,
  ctx: ServerContext,
  target: string,
  seal: RoundStateSeal,
  sent: Sent,
  options: RequestOptions,
): Promise<T> {
  const round = withoutConnectAnswer(roundParams(ctx, link.name, target, seal));
  const meta = sent.meta === undefined ? round.meta : toPlainMeta(sent.meta, round.meta);
  const fields: RelayFields = {
    ...(round.inputResponses ? { inputResponses: round.inputResponses } : {}),
    ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
    ...(meta !== undefined && Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  };
  const roundOptions = { ...options, allowInputRequired: true };
  const result = await within(link, client, sent.limit, ctx, roundOptions, (o) => send(client, o, fields));
  return sealed(result, link.name, target, seal);
}

/**
 * Sends a request within the response limit a `guard` wrapper set, if any:
 * an answer past it is not read further and is refused with
 * `UPSTREAM_RESPONSE_TOO_LARGE`, as a tool call's is.
 */
async function within<T>(
  link: FeatureLink,
  client: Client,
  limit: number | undefined,
  ctx: ServerContext,
  options: RequestOptions,
  send: (options: RequestOptions) => Promise<T>,
): Promise<T> {
  if (limit === undefined) return send(options);
  const answer = await budgetedRequest(client, limit, ctx, options, send);
  if (!answer.over) return answer.value;
  const refused = refusalError(
    upstreamFailure(
      CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE,
      link.name,
      `The answer of upstream "${link.name}" exceeded ${answer.limit} bytes and was not read further.`,
      'Ask for less: narrow the query, or request fewer items or a smaller page.',
    ),
  );
  throw new ProtocolError(refused.code, refused.message, {
    ...(refused.data as Record<string, unknown>),
    readLimitBytes: answer.limit,
  });
}

async function guard(link: FeatureLink, work: () => Promise<void>): Promise<void> {
  if (link.connected() === undefined) throw unavailable(link);
  try {
    await work();
  } catch (error) {
    throw forClient(link, error);
  }
}

function unavailable(link: FeatureLink): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    `Upstream "${link.name}" is not connected right now; Sluice is reconnecting to it`,
    { upstream: link.name },
  );
}

const SDK_PREFIX = /^MCP error -?\d+: /;

/**
 * A JSON-RPC error (the upstream's, the SDK's or core's) keeps its code and data; anything else becomes an
 * internal error naming the upstream.
 */
function forClient(link: FeatureLink, error: unknown): Error {
  if (SluiceError.is(error)) return toProtocolError(error);
  if (isRpcError(error)) {
    const message = link.redact(error.message.replace(SDK_PREFIX, ''));
    return new ProtocolError(error.code, message, error.data);
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return new ProtocolError(
      ProtocolErrorCode.InternalError,
      `Upstream "${link.name}" did not answer within ${link.timeoutMs} ms`,
      { upstream: link.name },
    );
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    `Upstream "${link.name}" failed: ${link.redact(messageOf(error))}`,
    { upstream: link.name },
  );
}
