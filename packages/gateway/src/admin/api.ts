import type { RequestListener } from 'node:http';
import type { AdminContext, AdminHandler } from './admin-surface.js';
import { adminRoute, requireLedger } from './admin-surface.js';
import { allow, fieldsOf, readBody, sendJson, toolOf } from './http-io.js';
import { toolViews, upstreamViews } from './snapshot.js';
import { answerQuestion, viaOf } from './approvals.js';
import { requireVault, revokeGrants, slotFilterOf } from './credentials.js';
import { sendAuditPage } from './audit-page.js';

/** The admin API's version prefix: a change that breaks a client gets a new one. */
export const ADMIN_API_PREFIX = '/admin/v1';

/** The admin API's paths, below the prefix. */
export const AdminApiPath = Object.freeze({
  LEDGER: `${ADMIN_API_PREFIX}/ledger`,
  LEDGER_DIFF: `${ADMIN_API_PREFIX}/ledger/diff`,
  LEDGER_APPROVE: `${ADMIN_API_PREFIX}/ledger/approve`,
  LEDGER_REVOKE: `${ADMIN_API_PREFIX}/ledger/revoke`,
  UPSTREAMS: `${ADMIN_API_PREFIX}/upstreams`,
  TOOLS: `${ADMIN_API_PREFIX}/tools`,
  LIVE: `${ADMIN_API_PREFIX}/live`,
  APPROVALS: `${ADMIN_API_PREFIX}/approvals`,
  APPROVALS_APPROVE: `${ADMIN_API_PREFIX}/approvals/approve`,
  APPROVALS_DENY: `${ADMIN_API_PREFIX}/approvals/deny`,
  CREDENTIALS: `${ADMIN_API_PREFIX}/credentials`,
  CREDENTIALS_REVOKE: `${ADMIN_API_PREFIX}/credentials/revoke`,
  CREDENTIALS_ROTATE: `${ADMIN_API_PREFIX}/credentials/rotate`,
  AUDIT: `${ADMIN_API_PREFIX}/audit`,
} as const);

/** The JSON admin API, by path: what the console shows and `sluice ledger` uses. */
export function adminApiRoutes(context: AdminContext): Record<string, RequestListener> {
  const route = (handler: AdminHandler) =>
    adminRoute(context, handler, (res, status, message) => sendJson(res, status, { error: message }));
  const answerRoute = (decision: 'approved' | 'denied') =>
    route(async (req, res, operator) => {
      allow(req, ['POST']);
      const fields = fieldsOf(await readBody(req), req.headers['content-type']);
      sendJson(res, 200, await answerQuestion(context, fields, decision, operator, viaOf(fields)));
    });
  const query = (url: string | undefined) => new URL(url ?? '/', 'http://admin.invalid').searchParams;
  return {
    [AdminApiPath.LEDGER]: route(async (req, res) => {
      allow(req, ['GET']);
      sendJson(res, 200, { tools: await requireLedger(context).list() });
    }),
    [AdminApiPath.LEDGER_DIFF]: route(async (req, res) => {
      allow(req, ['GET']);
      const params = query(req.url);
      const diff = await requireLedger(context).diff(params.get('server') ?? '', params.get('tool') ?? '');
      sendJson(res, 200, diff);
    }),
    [AdminApiPath.LEDGER_APPROVE]: route(async (req, res, operator) => {
      allow(req, ['POST']);
      const { server, tool } = toolOf(fieldsOf(await readBody(req), req.headers['content-type']));
      sendJson(res, 200, await requireLedger(context).approve(server, tool, operator, 'admin-api'));
    }),
    [AdminApiPath.LEDGER_REVOKE]: route(async (req, res, operator) => {
      allow(req, ['POST']);
      const { server, tool } = toolOf(fieldsOf(await readBody(req), req.headers['content-type']));
      sendJson(res, 200, await requireLedger(context).revoke(server, tool, operator, 'admin-api'));
    }),
    [AdminApiPath.UPSTREAMS]: route((req, res) => {
      allow(req, ['GET']);
      sendJson(res, 200, { upstreams: upstreamViews(context) });
    }),
    [AdminApiPath.TOOLS]: route(async (req, res) => {
      allow(req, ['GET']);
      const ledger = context.ledger();
      sendJson(res, 200, { tools: toolViews(context, ledger ? await ledger.list() : []), skipped: context.skipped() });
    }),
    [AdminApiPath.LIVE]: route((req, res) => {
      allow(req, ['GET']);
      sendJson(res, 200, context.live.read(context.metrics));
    }),
    [AdminApiPath.APPROVALS]: route(async (req, res) => {
      allow(req, ['GET']);
      sendJson(res, 200, { approvals: await context.approvals() });
    }),
    [AdminApiPath.APPROVALS_APPROVE]: answerRoute('approved'),
    [AdminApiPath.APPROVALS_DENY]: answerRoute('denied'),
    // Grants are listed by slot (upstream, caller): their tokens never leave the vault.
    [AdminApiPath.CREDENTIALS]: route(async (req, res) => {
      allow(req, ['GET']);
      const filter = slotFilterOf(Object.fromEntries(query(req.url)), false);
      sendJson(res, 200, { credentials: await requireVault(context).list(filter) });
    }),
    [AdminApiPath.CREDENTIALS_REVOKE]: route(async (req, res, operator) => {
      allow(req, ['POST']);
      const filter = slotFilterOf(fieldsOf(await readBody(req), req.headers['content-type']), true);
      sendJson(res, 200, { revoked: await revokeGrants(context, filter, operator) });
    }),
    [AdminApiPath.CREDENTIALS_ROTATE]: route(async (req, res, operator) => {
      allow(req, ['POST']);
      const resealed = await requireVault(context).rotate();
      context.logger.info(
        { event: 'admin.credentials_rotated', resealed, by: operator },
        `${resealed} upstream grant(s) resealed with the first vault key by ${operator}`,
      );
      sendJson(res, 200, { resealed });
    }),
    [AdminApiPath.AUDIT]: route(async (req, res) => {
      allow(req, ['GET']);
      await sendAuditPage(res, context.audit, query(req.url));
    }),
  };
}
