import { SluiceError, messageOf } from '@sluice/core';
import type { CredentialSlot } from '@sluice/core';
import { GatewayErrorCode } from '../errors.js';
import { AdminApiPath } from './api.js';
import type { LedgerDiff, LedgerRow } from './ledger-view.js';
import type { PendingApproval } from '@sluice/plugin-risk';
import { AuditHeader } from './audit-page.js';

/** What the admin API answers when it took an operator's answer. */
export interface AnsweredQuestion {
  readonly id: string;
  readonly decision: 'approved' | 'denied';
  readonly by: string;
  readonly via: string;
}

/** A page of the audit log as the client reads it. */
export interface AuditPageAnswer {
  /** One entry per line, as the gateway sent it. */
  readonly lines: readonly string[];
  readonly anchor: { readonly seq: number; readonly prev: string };
  readonly head: { readonly seq: number; readonly hash: string };
  /** The `after` of the next page; undefined on the last. */
  readonly next: number | undefined;
}

/** The largest answer the client reads from the admin API. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * The admin API from another process (`sluice ledger`): the same JSON the
 * console's pages are built from, with the same authentication.
 */
export class AdminClient {
  constructor(
    private readonly base: URL,
    private readonly key: string | undefined,
  ) {}

  async list(): Promise<LedgerRow[]> {
    return ((await this.request('GET', AdminApiPath.LEDGER)) as { tools: LedgerRow[] }).tools;
  }

  async diff(row: Pick<LedgerRow, 'server' | 'tool'>): Promise<LedgerDiff> {
    const query = new URLSearchParams({ server: row.server, tool: row.tool });
    return (await this.request('GET', `${AdminApiPath.LEDGER_DIFF}?${query.toString()}`)) as LedgerDiff;
  }

  async decide(action: 'approve' | 'revoke', row: Pick<LedgerRow, 'server' | 'tool'>): Promise<LedgerRow> {
    const path = action === 'approve' ? AdminApiPath.LEDGER_APPROVE : AdminApiPath.LEDGER_REVOKE;
    return (await this.request('POST', path, { server: row.server, tool: row.tool })) as LedgerRow;
  }

  /** Calls waiting for a person's approval, operator questions of every replica among them. */
  async approvals(): Promise<PendingApproval[]> {
    return ((await this.request('GET', AdminApiPath.APPROVALS)) as { approvals: PendingApproval[] }).approvals;
  }

  /** Answers an operator question, as the key's operator, through `cli`. */
  async answer(decision: 'approved' | 'denied', id: string, reason: string | undefined): Promise<AnsweredQuestion> {
    const path = decision === 'approved' ? AdminApiPath.APPROVALS_APPROVE : AdminApiPath.APPROVALS_DENY;
    return (await this.request('POST', path, {
      id,
      via: 'cli',
      ...(reason === undefined ? {} : { reason }),
    })) as AnsweredQuestion;
  }

  /** The grants in the vault (slots only), optionally of one upstream or caller. */
  async credentials(filter: Partial<CredentialSlot>): Promise<CredentialSlot[]> {
    const query = new URLSearchParams(filter);
    const path = `${AdminApiPath.CREDENTIALS}${query.size > 0 ? `?${query.toString()}` : ''}`;
    return ((await this.request('GET', path)) as { credentials: CredentialSlot[] }).credentials;
  }

  async revokeCredentials(filter: Partial<CredentialSlot>): Promise<number> {
    return ((await this.request('POST', AdminApiPath.CREDENTIALS_REVOKE, filter)) as { revoked: number }).revoked;
  }

  async rotateCredentials(): Promise<number> {
    return ((await this.request('POST', AdminApiPath.CREDENTIALS_ROTATE, {})) as { resealed: number }).resealed;
  }

  /** A row by the name clients see, or by `upstream/tool`. */
  async find(tool: string): Promise<LedgerRow> {
    const rows = await this.list();
    const row = rows.find((r) => r.name === tool) ?? rows.find((r) => `${r.server}/${r.tool}` === tool);
    if (row === undefined)
      throw new SluiceError(
        GatewayErrorCode.UNKNOWN_LEDGER_TOOL,
        `The ledger has no tool "${tool}": name it as clients see it, or as <upstream>/<tool>`,
      );
    return row;
  }

  /** One page of the audit log: its JSON Lines as sent, the anchor and head, and the next page's `after`. */
  async auditPage(after: number, limit: number): Promise<AuditPageAnswer> {
    const query = new URLSearchParams({ after: String(after), limit: String(limit) });
    const { answer, text } = await this.send('GET', `${AdminApiPath.AUDIT}?${query.toString()}`);
    if (!answer.ok) this.refused(answer, text, AdminApiPath.AUDIT);
    const anchor = pairOf(answer.headers.get(AuditHeader.ANCHOR));
    const head = pairOf(answer.headers.get(AuditHeader.HEAD));
    if (anchor === undefined || head === undefined)
      throw unavailable('the admin API answered an audit page without its anchor and head headers');
    const next = answer.headers.get(AuditHeader.NEXT);
    return {
      lines: text.split('\n').filter((line) => line !== ''),
      anchor: { seq: anchor.seq, prev: anchor.hash },
      head,
      next: next === null ? undefined : Number(next),
    };
  }

  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const { answer, text } = await this.send(method, path, body);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw unavailable(
        `the admin API answered ${answer.status} without JSON: is "admin" set in the gateway's config?`,
      );
    }
    if (answer.ok) return parsed;
    return this.refused(answer, text, path, parsed);
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ answer: Response; text: string }> {
    const url = new URL(path, this.base);
    let answer: Response;
    try {
      answer = await fetch(url, {
        method,
        headers: {
          ...(this.key ? { authorization: `Bearer ${this.key}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw unavailable(
        `cannot reach the gateway's admin API at ${url.origin} (${messageOf(error)}); is it running with "admin" set?`,
      );
    }
    const text = await answer.text();
    if (text.length > MAX_ANSWER_BYTES) throw unavailable('the admin API answered more than 16 MiB');
    return { answer, text };
  }

  private refused(answer: Response, text: string, path: string, parsed: unknown = jsonOrNull(text)): never {
    const error = (parsed as { error?: unknown } | null)?.error;
    const reason = typeof error === 'string' ? error : `status ${answer.status}`;
    if (answer.status === 404 && path.startsWith(AdminApiPath.LEDGER))
      throw new SluiceError(GatewayErrorCode.UNKNOWN_LEDGER_TOOL, reason);
    if (answer.status === 409 && path.startsWith(AdminApiPath.LEDGER))
      throw new SluiceError(GatewayErrorCode.NO_LEDGER, reason);
    if (answer.status === 409 && path.startsWith(AdminApiPath.CREDENTIALS))
      throw new SluiceError(GatewayErrorCode.NO_VAULT, reason);
    throw unavailable(
      answer.status === 401
        ? `${reason}: set SLUICE_ADMIN_KEY to a key the gateway accepts`
        : `the admin API refused: ${reason}`,
    );
  }
}

function pairOf(header: string | null): { seq: number; hash: string } | undefined {
  const match = header === null ? null : /^(\d{1,16}) (\S{1,128})$/.exec(header);
  return match === null ? undefined : { seq: Number(match[1]), hash: match[2] as string };
}

function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function unavailable(message: string): SluiceError {
  return new SluiceError(GatewayErrorCode.ADMIN_UNAVAILABLE, message);
}
