import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { DiffLine, PendingApproval } from '@sluice/plugin-risk';
import type { AdminContext, AdminHandler } from './admin-surface.js';
import { adminRoute, requireLedger } from './admin-surface.js';
import type { ConsoleLogin } from './console-login.js';
import { csrfField, esc, sendPage, when } from './html.js';
import { allow, fieldsOf, readBody, toolOf } from './http-io.js';
import type { LedgerDiff, LedgerRow } from './ledger-view.js';
import { verdictSummary } from './ledger-view.js';
import type { SkippedView, ToolView, UpstreamView } from './snapshot.js';
import { toolViews, upstreamViews } from './snapshot.js';
import { answerQuestion } from './approvals.js';
import { credentialsSection, revokeGrants, slotFilterOf } from './credentials.js';
import type { SlotFilter } from './credentials.js';

/** Where the console is served. */
export const CONSOLE_PATH = '/console';

/**
 * The console's pages and form targets, by path, each behind `login` (the
 * listener's header or a session cookie), and the login and logout routes.
 */
export function consoleRoutes(context: AdminContext, login: ConsoleLogin): Record<string, RequestListener> {
  const base = CONSOLE_PATH;
  const route = (handler: AdminHandler) =>
    login.guard(
      adminRoute(context, handler, (res, status, message) =>
        sendPage(res, base, '', 'Refused', `<p class="note">${esc(message)}</p>`, { status }),
      ),
    );
  const page = (req: IncomingMessage, res: ServerResponse, current: string, title: string, main: string) =>
    sendPage(res, base, current, title, main, { csrf: login.sessionOf(req)?.csrf });
  const decide = (action: 'approve' | 'revoke') =>
    route(async (req, res, operator) => {
      allow(req, ['POST']);
      const fields = fieldsOf(await readBody(req), req.headers['content-type']);
      login.checkForm(req, fields);
      const { server, tool } = toolOf(fields);
      const ledger = requireLedger(context);
      await (action === 'approve'
        ? ledger.approve(server, tool, operator, 'console')
        : ledger.revoke(server, tool, operator, 'console'));
      redirect(res, `${base}/ledger`);
    });
  const answer = (decision: 'approved' | 'denied') =>
    route(async (req, res, operator) => {
      allow(req, ['POST']);
      const fields = fieldsOf(await readBody(req), req.headers['content-type']);
      login.checkForm(req, fields);
      await answerQuestion(context, fields, decision, operator, 'console');
      redirect(res, `${base}/approvals`);
    });
  return {
    ...login.routes(),
    [base]: route((req, res) => {
      allow(req, ['GET']);
      redirect(res, `${base}/tools`);
    }),
    [`${base}/upstreams`]: route((req, res) => {
      allow(req, ['GET', 'HEAD']);
      page(req, res, 'upstreams', 'Upstreams', upstreamsPage(upstreamViews(context)));
    }),
    [`${base}/tools`]: route(async (req, res) => {
      allow(req, ['GET', 'HEAD']);
      const params = new URL(req.url ?? '/', 'http://console.invalid').searchParams;
      const ledger = context.ledger();
      const tools = toolViews(context, ledger ? await ledger.list() : []);
      page(req, res, 'tools', 'Tools', toolsPage(tools, context.skipped(), params));
    }),
    [`${base}/ledger`]: route(async (req, res) => {
      allow(req, ['GET', 'HEAD']);
      const ledger = context.ledger();
      if (ledger === undefined) {
        page(req, res, 'ledger', 'Ledger', '<p class="note">No risk ledger: configure <code>plugins.risk</code>.</p>');
        return;
      }
      const rows = await ledger.list();
      const diffs = await Promise.all(
        rows.filter((row) => row.lifecycle !== 'ACTIVE' || row.changed).map((row) => ledger.diff(row.server, row.tool)),
      );
      page(req, res, 'ledger', 'Ledger', ledgerPage(rows, diffs, base, login.sessionOf(req)?.csrf));
    }),
    [`${base}/ledger/approve`]: decide('approve'),
    [`${base}/ledger/revoke`]: decide('revoke'),
    [`${base}/credentials`]: route(async (req, res) => {
      allow(req, ['GET', 'HEAD']);
      const vault = context.credentials();
      const csrf = login.sessionOf(req)?.csrf;
      const hidden = (slot: SlotFilter) =>
        Object.entries(slot)
          .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
          .join('') + csrfField(csrf);
      const main =
        vault === undefined
          ? '<p class="note">No credential vault: configure <code>credentialVault</code>.</p>'
          : credentialsSection(await vault.list(), `${base}/credentials/revoke`, hidden, esc);
      page(req, res, 'credentials', 'Upstream credentials', main);
    }),
    [`${base}/credentials/revoke`]: route(async (req, res, operator) => {
      allow(req, ['POST']);
      const fields = fieldsOf(await readBody(req), req.headers['content-type']);
      login.checkForm(req, fields);
      await revokeGrants(context, slotFilterOf(fields, true), operator);
      redirect(res, `${base}/credentials`);
    }),
    [`${base}/live`]: route(async (req, res) => {
      allow(req, ['GET', 'HEAD']);
      const csrf = login.sessionOf(req)?.csrf;
      page(req, res, 'live', 'Live', approvalsSection(await context.approvals(), base, csrf) + livePage(context));
    }),
    [`${base}/approvals`]: route(async (req, res) => {
      allow(req, ['GET', 'HEAD']);
      const csrf = login.sessionOf(req)?.csrf;
      page(req, res, 'approvals', 'Approvals', approvalsSection(await context.approvals(), base, csrf));
    }),
    [`${base}/approvals/approve`]: answer('approved'),
    [`${base}/approvals/deny`]: answer('denied'),
  };
}

function redirect(res: ServerResponse, to: string): void {
  res.writeHead(303, { location: to, 'cache-control': 'no-store' });
  res.end();
}

function table(head: readonly string[], rows: readonly string[], empty: string): string {
  if (rows.length === 0) return `<p class="muted">${esc(empty)}</p>`;
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function chip(level: string | undefined, title = ''): string {
  return level === undefined
    ? '<span class="muted">-</span>'
    : `<span class="chip risk ${esc(level)}" data-level="${esc(level)}" title="${esc(title)}">${esc(level)}</span>`;
}

function upstreamsPage(upstreams: readonly UpstreamView[]): string {
  const rows = upstreams.map((u) => {
    const risk = u.risk;
    const axes = risk
      ? `transport ${risk.axes.transport}, auth ${risk.axes.auth}, trust ${risk.axes.trust}, doc ${risk.axes.doc}`
      : '';
    return `<tr data-upstream="${esc(u.name)}"><td>${esc(u.name)}</td><td class="${esc(u.health)}">${esc(u.health)}<br><span class="muted">since ${esc(when(u.since))}</span></td>
<td>${esc(u.transport)}<br><span class="muted">${esc(u.target)}</span></td>
<td>${chip(risk?.level, axes)} ${risk ? `<span class="muted">${esc(axes)}</span>` : ''}${risk && risk.floors.length > 0 ? `<br>floors: ${esc(risk.floors.join(', '))}` : ''}</td>
<td>${u.tools}</td><td>${u.lastError ? esc(u.lastError) : '<span class="muted">-</span>'}</td></tr>`;
  });
  return table(
    ['upstream', 'health', 'transport', 'server risk', 'tools', 'last error'],
    rows,
    'No upstreams configured.',
  );
}

function toolsPage(tools: readonly ToolView[], skipped: readonly SkippedView[], params: URLSearchParams): string {
  const q = (params.get('q') ?? '').toLowerCase();
  const level = params.get('level') ?? '';
  const shown = tools.filter(
    (t) =>
      (q === '' || t.name.toLowerCase().includes(q) || t.description.toLowerCase().includes(q)) &&
      (level === '' || t.risk?.level === level),
  );
  const levels = ['', 'L0', 'L1', 'L2', 'L3', 'L4', 'L5']
    .map((l) => `<option value="${l}"${l === level ? ' selected' : ''}>${l === '' ? 'any level' : l}</option>`)
    .join('');
  const filter = `<form method="get" class="filters"><input name="q" placeholder="search name or description" value="${esc(q)}">
<select name="level">${levels}</select> <button>Filter</button></form><br>`;
  const rows = shown.map((t) => {
    const risk = t.risk;
    const title = risk ? `server ${risk.server ?? '-'}, tool ${risk.tool ?? '-'}` : '';
    const hits = t.hits
      .map(
        (h) =>
          `<div class="hit"><b>${esc(h.pattern)}</b> (${esc(h.severity)}) in ${esc(h.surface)}: <mark>${esc(h.excerpt)}</mark></div>`,
      )
      .join('');
    return `<tr data-tool="${esc(t.name)}"><td>${esc(t.name)}<br><span class="muted">${esc(t.upstream ?? 'local')}${t.originalName && t.originalName !== t.name ? ` / ${esc(t.originalName)}` : ''}</span></td>
<td>${chip(risk?.level, title)}${risk?.hitl ? ' <span class="chip hitl" title="human approval before each call lowers the level by one">HITL −1</span>' : ''}<br><span class="muted">${esc(title)}</span></td>
<td><span class="chip ${t.state}">${t.state}</span></td>
<td>${risk?.floors && risk.floors.length > 0 ? esc(risk.floors.join(', ')) : '<span class="muted">-</span>'}</td>
<td>${hits || '<span class="muted">-</span>'}</td></tr>`;
  });
  const skippedRows = skipped.map(
    (s) =>
      `<tr data-skipped="${esc(s.name)}"><td>${esc(s.name)}</td><td>${esc(s.upstream)}</td><td>${esc(s.by)}</td><td>${esc(s.reason)}</td></tr>`,
  );
  return `${filter}${table(['tool', 'risk', 'state', 'floors', 'poisoning hits'], rows, 'No tool matches.')}
<h2>Skipped (${skipped.length})</h2>${table(['tool', 'upstream', 'by', 'why'], skippedRows, 'Nothing was skipped.')}`;
}

function ledgerPage(
  rows: readonly LedgerRow[],
  diffs: readonly LedgerDiff[],
  base: string,
  csrf: string | undefined,
): string {
  const pending = diffs.map((d) => {
    const label = d.row.name ?? `${d.row.server}/${d.row.tool}`;
    const hidden = `<input type="hidden" name="server" value="${esc(d.row.server)}"><input type="hidden" name="tool" value="${esc(d.row.tool)}">${csrfField(csrf)}`;
    return `<section class="review" data-tool="${esc(label)}"><h3>${esc(label)} <span class="chip ${d.row.lifecycle === 'REVOKED' ? 'revoked' : 'held'}">${esc(d.row.lifecycle)}</span></h3>
<p class="muted">upstream ${esc(d.row.server)}, its name ${esc(d.row.tool)}; changed ${esc(when(d.row.changedAt))}</p>
${diffBlock(d)}
<form class="inline" method="post" action="${esc(`${base}/ledger/approve`)}">${hidden}<button class="approve">Approve this definition</button></form>
<form class="inline" method="post" action="${esc(`${base}/ledger/revoke`)}">${hidden}<button class="revoke">Revoke</button></form></section>`;
  });
  const all = rows.map((r) => {
    const last = r.decisions.at(-1);
    const hidden = `<input type="hidden" name="server" value="${esc(r.server)}"><input type="hidden" name="tool" value="${esc(r.tool)}">${csrfField(csrf)}`;
    const action =
      r.lifecycle === 'ACTIVE'
        ? `<form class="inline" method="post" action="${esc(`${base}/ledger/revoke`)}">${hidden}<button class="revoke">Revoke</button></form>`
        : `<form class="inline" method="post" action="${esc(`${base}/ledger/approve`)}">${hidden}<button class="approve">Approve</button></form>`;
    return `<tr data-ledger="${esc(r.name ?? r.tool)}"><td>${esc(r.name ?? '-')}</td><td>${esc(r.server)} / ${esc(r.tool)}</td>
<td><span class="chip ${r.lifecycle === 'ACTIVE' ? 'active' : r.lifecycle === 'REVOKED' ? 'revoked' : 'held'}">${esc(r.lifecycle)}</span>${r.present ? '' : ' <span class="muted">(gone)</span>'}</td>
<td>${last ? `${esc(last.action === 'approve' ? 'approved' : 'revoked')} by ${esc(last.by)}<br><span class="muted">${esc(when(last.at))}</span>` : '<span class="muted">-</span>'}</td><td class="verdict">${esc(verdictSummary(r.verdict))}</td><td>${action}</td></tr>`;
  });
  return `<h2>Awaiting a decision (${diffs.length})</h2>${pending.join('') || '<p class="muted">Nothing waits for review.</p>'}
<h2>Every tool (${rows.length})</h2>${table(['exposed as', 'upstream / its name', 'lifecycle', 'last decision', 'scan verdict', ''], all, 'The ledger is empty.')}`;
}

function diffBlock(d: LedgerDiff): string {
  if (d.approved === null || d.current === null)
    return '<p class="note">The approved definition was recorded before the ledger kept definitions: no diff to show.</p>';
  const line = (l: DiffLine) =>
    l.op === 'same'
      ? `<span>  ${esc(l.text)}</span>\n`
      : l.op === 'added'
        ? `<ins>+ ${esc(l.text)}</ins>`
        : `<del>- ${esc(l.text)}</del>`;
  return `<pre class="diff">${d.diff.map(line).join('')}</pre>`;
}

/**
 * Calls that wait for a person: who asked, for which tool, since when. An
 * operator question also shows its text (the arguments masked and capped,
 * as a client's person would read them) and has approve and deny
 * buttons (deny asks for the reason the caller will read); the others wait
 * for the person at the client.
 */
function approvalsSection(approvals: readonly PendingApproval[], base: string, csrf: string | undefined): string {
  const rows = approvals.map((a) => {
    const id = `<input type="hidden" name="id" value="${esc(a.id)}">${csrfField(csrf)}`;
    const actions =
      a.via === 'operator'
        ? `<form class="inline" method="post" action="${esc(`${base}/approvals/approve`)}">${id}<button class="approve">Approve</button></form>
<form class="inline deny" method="post" action="${esc(`${base}/approvals/deny`)}">${id}<input name="reason" required maxlength="500" placeholder="why (the caller reads it)"> <button class="revoke">Deny</button></form>`
        : '<span class="muted">the client answers</span>';
    const message = a.message === undefined ? '' : `<div class="question">${esc(a.message)}</div>`;
    return `<tr data-approval="${esc(a.id)}" data-tool="${esc(a.tool)}"><td>${esc(a.tool)}<br><span class="muted">${esc(a.server)}</span>${message}</td>
<td>${chip(a.level)}${a.reason ? ` <span class="muted">${esc(a.reason)}</span>` : ''}</td>
<td>${a.caller === undefined ? '<span class="muted">unknown</span>' : esc(a.caller)}</td>
<td>${esc(when(a.since))}<br><span class="muted">lapses ${esc(when(a.expiresAt))}</span></td><td>${esc(a.via)}</td><td class="actions">${actions}</td></tr>`;
  });
  return `<h2>Pending approvals (${approvals.length})</h2>${table(
    ['tool', 'risk, reason', 'caller', 'asked', 'via', ''],
    rows,
    'No call waits for a person.',
  )}`;
}

function livePage(context: AdminContext): string {
  const live = context.live.read(context.metrics);
  if (context.metrics === undefined)
    return '<p class="note">Metrics are off (<code>telemetry.metricsPath: false</code>).</p>';
  const rates = live.rates.map((r) => `<tr><td>${esc(r.tool)}</td><td>${r.perSecond}</td></tr>`);
  const gauges = (list: typeof live.inFlight) => list.map((r) => `<tr><td>${esc(r.tool)}</td><td>${r.value}</td></tr>`);
  const refusals = live.refusals.map(
    (r) => `<tr><td>${esc(r.code)}</td><td>${esc(r.tool)}</td><td>${r.count}</td></tr>`,
  );
  return `<h2>Calls per second</h2>${table(['tool', 'calls/s'], rates, 'No calls yet (the rate needs two readings a second apart).')}
<h2>In flight</h2>${table(['tool', 'calls'], gauges(live.inFlight), 'Nothing running.')}
<h2>Queued</h2>${table(['tool', 'calls'], gauges(live.queued), 'Nothing queued.')}
<h2>Refusals by code</h2>${table(['code', 'tool', 'count'], refusals, 'No refusals.')}`;
}
