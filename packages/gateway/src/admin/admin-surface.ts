import type { RequestListener, ServerResponse } from 'node:http';
import { SluiceError } from '@sluice/core';
import type { Audit, Logger } from '@sluice/core';
import type { CredentialVault } from '@sluice/upstream';
import type { RouteRequest } from '@sluice/http';
import type { PendingApproval } from '@sluice/plugin-risk';
import { GatewayErrorCode } from '../errors.js';
import { operatorOf } from './caller.js';
import { HttpProblem } from './http-io.js';
import type { LedgerView } from './ledger-view.js';
import type { AnswerOutcome, ApprovalAnswer } from './approvals.js';
import type { AdminSources, LiveRates } from './snapshot.js';

/** What the admin API and the console share: the gateway's state, its ledger, who may act. */
export interface AdminContext extends AdminSources {
  /** Undefined without `plugins.risk` (or in its `off` mode). */
  readonly ledger: () => LedgerView | undefined;
  /** Calls waiting for a person's approval (operator questions: on every replica); empty without `plugins.risk`. */
  readonly approvals: () => Promise<readonly PendingApproval[]>;
  /** An operator's answer to a pending operator question, on any replica's store. */
  readonly answer: (id: string, answer: ApprovalAnswer) => Promise<AnswerOutcome>;
  /** The vault of upstream grants; undefined without `credentialVault`. */
  readonly credentials: () => CredentialVault | undefined;
  /** The server's audit log (`GET /admin/v1/audit`). */
  readonly audit: Audit;
  readonly scopes: readonly string[];
  readonly logger: Logger;
  readonly live: LiveRates;
}

/** A handler of the admin surface: resolves once it answered; throws `HttpProblem` or `SluiceError` to refuse. */
export type AdminHandler = (req: RouteRequest, res: ServerResponse, operator: string) => void | Promise<void>;

/** How a refusal is written: JSON for the API, a page for the console. */
export type ProblemWriter = (res: ServerResponse, status: number, message: string) => void;

/**
 * A route of the admin surface: checks the caller's scopes, runs the handler,
 * and turns what it throws into a status, never a stack trace.
 */
export function adminRoute(context: AdminContext, handler: AdminHandler, problem: ProblemWriter): RequestListener {
  return (req: RouteRequest, res: ServerResponse) => {
    const run = async (): Promise<void> => {
      const operator = operatorOf(req.auth, context.scopes);
      await handler(req, res, operator);
    };
    run().catch((error: unknown) => {
      const [status, message] = statusOf(error);
      if (status >= 500)
        context.logger.error({ event: 'admin.failed', err: error, path: req.url }, 'an admin request failed');
      if (res.headersSent) res.end();
      else problem(res, status, message);
    });
  };
}

/** The ledger, or a 409 saying what the config lacks. */
export function requireLedger(context: AdminContext): LedgerView {
  const ledger = context.ledger();
  if (ledger === undefined)
    throw new SluiceError(GatewayErrorCode.NO_LEDGER, 'The gateway has no risk ledger: configure plugins.risk');
  return ledger;
}

function statusOf(error: unknown): [number, string] {
  if (error instanceof HttpProblem) return [error.status, error.message];
  if (SluiceError.is(error)) {
    if (error.code === GatewayErrorCode.UNKNOWN_LEDGER_TOOL) return [404, error.message];
    if (error.code === GatewayErrorCode.NO_LEDGER || error.code === GatewayErrorCode.NO_VAULT)
      return [409, error.message];
  }
  return [500, 'internal error: see the gateway log'];
}
