// Type-only from the client package: the feature handlers load this without loading the client SDK.
import type { Client, RequestOptions } from '@modelcontextprotocol/client';
import type { ServerContext } from '@modelcontextprotocol/server';
import { NodeHttpClientTransport } from './node-http-transport.js';
import { ResponseBudget, withResponseBudget } from './response-limit.js';

/** An upstream answer read within its budget, or the limit it went past (then it was not read further). */
export type Budgeted<T> = { readonly over: false; readonly value: T } | { readonly over: true; readonly limit: number };

/**
 * Sends one request upstream with a response budget of `limit` bytes, as a
 * tool call's is: the node:http transport counts the answer's bytes as they
 * arrive and drops the socket past the budget; the SDK's fetch-based
 * transports find the budget through the async context and stop by its
 * signal; an answer that arrived whole (stdio) is measured once.
 */
export async function budgetedRequest<T>(
  client: Client,
  limit: number,
  caller: ServerContext | undefined,
  options: RequestOptions,
  send: (options: RequestOptions) => Promise<T>,
): Promise<Budgeted<T>> {
  const budget = new ResponseBudget(limit);
  const transport = client.transport;
  const carried = transport instanceof NodeHttpClientTransport ? transport.carry(budget, caller) : undefined;
  const signal = options.signal === undefined ? budget.signal : AbortSignal.any([options.signal, budget.signal]);
  const budgetedOptions: RequestOptions = { ...options, signal, ...(carried ? { headers: carried } : {}) };
  try {
    const value = await withResponseBudget(budget, () => send(budgetedOptions));
    return budget.admits(value) ? { over: false, value } : { over: true, limit: budget.exceededLimit };
  } catch (error) {
    if (budget.exceeded) return { over: true, limit: budget.exceededLimit };
    throw error;
  } finally {
    if (carried) (transport as NodeHttpClientTransport).release(carried);
  }
}
