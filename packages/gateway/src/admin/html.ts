import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** Text made safe to put in HTML, in an element or a quoted attribute. */
export function esc(text: string | number | undefined): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An epoch-milliseconds time as UTC, to the second. */
export function when(at: number | undefined): string {
  return at === undefined ? '-' : new Date(at).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#14213d;color:#fff;padding:10px 20px;display:flex;gap:18px;align-items:center}
header b{font-size:16px;margin-right:12px}header a{color:#cfd8ea;text-decoration:none}header a.on{color:#fff;border-bottom:2px solid #fca311}
main{padding:16px 20px}table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e3e6eb;vertical-align:top}th{background:#eef1f5;font-weight:600}
.chip{display:inline-block;border-radius:10px;padding:0 8px;font-weight:600;font-size:12px;color:#fff}
.L0,.L1{background:#2a9d8f}.L2{background:#8ab17d}.L3{background:#e9c46a;color:#222}.L4{background:#f4a261;color:#222}.L5{background:#e63946}
.hitl{background:#5e60ce}.held{background:#f4a261;color:#222}.revoked{background:#e63946}.active{background:#2a9d8f}
.healthy{color:#2a9d8f}.degraded{color:#c98a00}.down,.connecting{color:#e63946}
.muted{color:#6b7280}mark{background:#ffd6a5}pre.diff{background:#fff;border:1px solid #e3e6eb;padding:8px;overflow:auto;max-height:420px}
pre.diff ins{background:#d8f3dc;text-decoration:none;display:block}pre.diff del{background:#ffd6d6;text-decoration:none;display:block}
form.inline{display:inline}td.actions{white-space:nowrap}form.deny input{width:190px;padding:2px 6px;margin-left:6px}div.question{max-width:440px;margin-top:4px;font-size:13px;overflow-wrap:anywhere}button{cursor:pointer;border:1px solid #8d99ae;border-radius:4px;padding:3px 10px;background:#fff}
button.approve{border-color:#2a9d8f;color:#1b6f65}button.revoke{border-color:#e63946;color:#b3202c}
.note{background:#fff3cd;border:1px solid #f0d48a;padding:8px 12px;margin-bottom:12px}
form.logout{margin-left:auto}form.logout button{background:transparent;color:#cfd8ea;border-color:#5c6b8a}
form.login{background:#fff;border:1px solid #e3e6eb;padding:16px;max-width:420px}form.login input{width:100%;box-sizing:border-box;padding:6px;margin:6px 0 12px}
`;

// Refreshes <main> every few seconds while nobody is typing, and only when what it shows has changed, so a
// button stays the same element until its row changes; without JavaScript the page is complete as served.
const SCRIPT = `
setInterval(async()=>{const a=document.activeElement;if(a&&a.tagName==='INPUT')return;
try{const r=await fetch(location.href,{cache:'no-store'});if(!r.ok)return;
const d=new DOMParser().parseFromString(await r.text(),'text/html');const m=d.querySelector('main');
const c=document.querySelector('main');if(m&&c&&m.innerHTML!==c.innerHTML)c.replaceWith(m);}catch{}},2000);
`;

const PAGES = [
  ['upstreams', 'Upstreams'],
  ['tools', 'Tools'],
  ['ledger', 'Ledger'],
  ['approvals', 'Approvals'],
  ['live', 'Live'],
  ['credentials', 'Credentials'],
] as const;

export interface PageOptions {
  readonly status?: number;
  /** The session's form token: the page then offers to log out, and its forms carry it. */
  readonly csrf?: string | undefined;
  /** Whether to show the navigation (not on the login page). Default true. */
  readonly nav?: boolean;
  /** Further headers, such as `set-cookie`. */
  readonly headers?: Readonly<Record<string, string | string[]>>;
}

/** The hidden field that carries a session's form token; empty without a session. */
export function csrfField(csrf: string | undefined): string {
  return csrf === undefined ? '' : `<input type="hidden" name="csrf" value="${esc(csrf)}">`;
}

/** A console page: the frame, the navigation, `main` as given; styles and the refresh script under a nonce. */
export function sendPage(
  res: ServerResponse,
  base: string,
  current: string,
  title: string,
  main: string,
  options: PageOptions = {},
): void {
  const nonce = randomBytes(16).toString('base64');
  const links = PAGES.map(
    ([page, label]) => `<a href="${esc(`${base}/${page}`)}"${page === current ? ' class="on"' : ''}>${label}</a>`,
  ).join('');
  const logout =
    options.csrf === undefined
      ? ''
      : `<form class="logout" method="post" action="${esc(`${base}/logout`)}">${csrfField(options.csrf)}<button>Log out</button></form>`;
  const nav = options.nav === false ? '' : links + logout;
  res.writeHead(options.status ?? 200, {
    ...options.headers,
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // Not `no-referrer`: it makes a browser send `Origin: null` with the forms, which the listener's Origin check refuses.
    'referrer-policy': 'same-origin',
    'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'`,
  });
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · Sluice</title><style nonce="${nonce}">${STYLE}</style></head>
<body><header><b>Sluice</b>${nav}</header>
<main data-page="${esc(current)}"><h1>${esc(title)}</h1>${main}</main>
<script nonce="${nonce}">${SCRIPT}</script></body></html>`);
}
