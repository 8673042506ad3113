// Each caller's share of the answers a replica routes to others over the store's bus (a second's window): callers
// flooding together fill the replica's total, yet another caller's small answers still pass.
import { describe, expect, it } from 'vitest';
import {
  MAX_ROUTED_BYTES_PER_SECOND,
  MAX_ROUTED_BYTES_PER_SECOND_ALL,
  ROUTED_BYTES_FLOOR,
  RouteBudget,
} from '../src/http-session-fleet.js';

describe('the routed answers budget', () => {
  it("holds each caller to its share and all to the total, yet passes a caller's first bytes when the total is spent", () => {
    let now = 1_000_000;
    const budget = new RouteBudget(() => now);
    // Attack: eight keys each post a second's share of made-up answers, filling the replica's total.
    const flooders = MAX_ROUTED_BYTES_PER_SECOND_ALL / MAX_ROUTED_BYTES_PER_SECOND;
    for (let k = 0; k < flooders; k++) expect(budget.take(`flood-${k}`, MAX_ROUTED_BYTES_PER_SECOND)).toBe(true);
    expect(budget.take('flood-0', 1)).toBe(false);
    expect(budget.take('flood-extra', ROUTED_BYTES_FLOOR + 1)).toBe(false);
    // A victim's real answers (small) still pass, up to its floor.
    expect(budget.take('victim', 2_000)).toBe(true);
    expect(budget.take('victim', ROUTED_BYTES_FLOOR - 2_000)).toBe(true);
    expect(budget.take('victim', 1)).toBe(false);
    // The next second, everyone's share is whole again.
    now += 1_000;
    expect(budget.take('flood-0', MAX_ROUTED_BYTES_PER_SECOND)).toBe(true);
    expect(budget.take('flood-0', 1)).toBe(false);
  });
});
