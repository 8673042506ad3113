// Which call an upstream's unmarked request or log line belongs to. Over stdio nothing says, so the gateway
// relays it to the call alone in flight. One caller's call must never receive what another caller's call
// left behind: a call that overlapped another caller's, or began just after one ended, is no longer trusted
// to be the only one the upstream is serving.
import { describe, expect, it } from 'vitest';
import type { ServerContext } from '@modelcontextprotocol/server';
import { CallRelay, SHARED_GRACE_MS } from '../src/upstream-features.js';

const call = (name: string) => ({ name }) as unknown as ServerContext;

describe('the call an unmarked upstream message is relayed to', () => {
  it("is the call alone in flight, until another caller's call overlaps it", () => {
    let now = 0;
    const relay = new CallRelay(() => now);
    const attacker = call('attacker');
    const leaveAttacker = relay.enter(attacker, 'apiKey:agent');
    expect(relay.caller()).toBe(attacker);
    const leaveVictim = relay.enter(call('victim'), 'apiKey:ops');
    expect(relay.caller()).toBeUndefined();
    now += 10;
    leaveVictim();
    // The victim's late log line or question must not reach the attacker's call, still in flight.
    expect(relay.caller()).toBeUndefined();
    leaveAttacker();
    expect(relay.inFlight).toBe(0);
  });

  it("is not a call that began within the grace after another caller's call ended", () => {
    let now = 0;
    const relay = new CallRelay(() => now);
    relay.enter(call('victim'), 'apiKey:ops')();
    now += SHARED_GRACE_MS - 1;
    const leave = relay.enter(call('attacker'), 'apiKey:agent');
    expect(relay.caller()).toBeUndefined();
    leave();
    now += SHARED_GRACE_MS;
    const later = call('later');
    relay.enter(later, 'apiKey:agent');
    expect(relay.caller()).toBe(later);
  });

  it('stays the call of one caller making calls one after another, or overlapping its own', () => {
    const now = 0;
    const relay = new CallRelay(() => now);
    const first = call('first');
    relay.enter(first, 'anonymous')();
    const second = call('second');
    const leaveSecond = relay.enter(second, 'anonymous');
    expect(relay.caller()).toBe(second);
    const leaveThird = relay.enter(call('third'), 'anonymous');
    expect(relay.caller()).toBeUndefined(); // two in flight: the upstream's message says not which
    leaveThird();
    expect(relay.caller()).toBe(second);
    leaveSecond();
  });
});
