import type { AnswerRefusal, OperatorVia } from '@sluice/plugin-risk';
import { MAX_ANSWER_REASON_CHARS } from '@sluice/plugin-risk';
import type { AdminContext } from './admin-surface.js';
import { UNAUTHENTICATED_OPERATOR } from './caller.js';
import { HttpProblem, stringField } from './http-io.js';

/** An operator's answer as the admin surface passes it to the risk plugin. */
export interface ApprovalAnswer {
  readonly decision: 'approved' | 'denied';
  readonly by: string;
  readonly via: OperatorVia;
  readonly reason: string | undefined;
}

/** What the admin surface answers with: the plugin's outcome. */
export type AnswerOutcome = { ok: true } | { ok: false; why: AnswerRefusal };

/** A question id as the store makes them; anything else is refused before it reaches the store. */
const QUESTION_ID = /^[1-9][0-9]{0,14}-[A-Za-z0-9_-]{16}$/;

/** The question id and reason a request's fields carry, checked. */
export function answerFields(
  fields: Record<string, unknown>,
  decision: 'approved' | 'denied',
): { id: string; reason: string | undefined } {
  const id = stringField(fields, 'id');
  if (id === undefined || !QUESTION_ID.test(id))
    throw new HttpProblem(400, 'name the question by "id", as GET /admin/v1/approvals lists it');
  const given = stringField(fields, 'reason')?.trim();
  if (given !== undefined && given.length > MAX_ANSWER_REASON_CHARS)
    throw new HttpProblem(400, `the reason is over ${MAX_ANSWER_REASON_CHARS} characters`);
  const reason = given === '' ? undefined : given;
  if (decision === 'denied' && reason === undefined)
    throw new HttpProblem(400, 'say why in "reason": the caller reads it');
  return { id, reason };
}

/** Where an API request says it came from: `cli` for `sluice approvals`, else `api`. */
export function viaOf(fields: Record<string, unknown>): 'api' | 'cli' {
  return stringField(fields, 'via') === 'cli' ? 'cli' : 'api';
}

/**
 * Only a verified operator answers: on a listener without authentication
 * anyone who reaches it (the model's client too) would be the operator.
 */
export function requireVerifiedOperator(operator: string): void {
  if (operator === UNAUTHENTICATED_OPERATOR)
    throw new HttpProblem(
      403,
      'answering an approval needs a verified operator: give listen.http an auth (apiKeys or oauth) and the operator the admin scope',
    );
}

/** The outcome as an error when the answer was not taken. */
export function checkOutcome(outcome: AnswerOutcome): void {
  if (outcome.ok) return;
  switch (outcome.why) {
    case 'unknown':
      throw new HttpProblem(404, 'no such question: it was never asked, or it is long gone');
    case 'lapsed':
      throw new HttpProblem(409, 'the question lapsed before the answer came');
    case 'answered':
      throw new HttpProblem(409, 'the question was already answered');
  }
}

/** Answers the question a request names, as `operator`, through `via`; throws what the caller is told. */
export async function answerQuestion(
  context: AdminContext,
  fields: Record<string, unknown>,
  decision: 'approved' | 'denied',
  operator: string,
  via: OperatorVia,
): Promise<{ id: string; decision: 'approved' | 'denied'; by: string; via: OperatorVia }> {
  requireVerifiedOperator(operator);
  const { id, reason } = answerFields(fields, decision);
  checkOutcome(await context.answer(id, { decision, by: operator, via, reason }));
  return { id, decision, by: operator, via };
}
