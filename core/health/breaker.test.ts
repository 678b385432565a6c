import { describe, expect, it } from "vitest";
import { CircuitBreaker, PROBE_WAIT_MS, type BreakerPolicy, type CircuitState } from "./breaker.ts";

const policy: BreakerPolicy = { consecutiveFailures: 3, errorRate: 0.5, minRequests: 10, windowMs: 10_000, cooldownMs: 1_000 };

function make() {
  const moves: string[] = [];
  const b = new CircuitBreaker(policy, (from: CircuitState, to: CircuitState) => moves.push(`${from}->${to}`));
  return { b, moves };
}

describe("CircuitBreaker", () => {
  it("opens after N consecutive failures and skips the endpoint while open", () => {
    const { b, moves } = make();
    b.record(false, 0);
    b.record(false, 1);
    expect(b.allow(2)).toBe(true);
    b.record(false, 2);
    expect(b.state).toBe("open");
    expect(b.allow(500)).toBe(false);
    expect(moves).toEqual(["closed->open"]);
  });

  it("only the probe's own request frees the half-open probe slot: another one ending without an outcome does not", () => {
    const { b } = make();
    const earlier = {}; // let through while closed; its client leaves later
    const probe = {};
    const next = {};
    expect(b.allow(0, earlier)).toBe(true);
    for (let t = 1; t <= 3; t++) b.record(false, t);
    expect(b.allow(1_100, probe)).toBe(true); // the cooldown is over: the probe
    expect(b.allow(1_101, next)).toBe(false);
    b.release(earlier); // the earlier request's client leaves: no second probe
    expect(b.allow(1_102, next)).toBe(false);
    b.release(probe); // the probe's own client leaves: the slot is free
    expect(b.allow(1_103, next)).toBe(true);
  });

  it("a success resets the consecutive count", () => {
    const { b } = make();
    b.record(false, 0);
    b.record(false, 1);
    b.record(true, 2);
    b.record(false, 3);
    b.record(false, 4);
    expect(b.state).toBe("closed");
  });

  it("opens on an error rate over the window once enough requests were seen", () => {
    const { b } = make();
    // alternating failures never reach 3 in a row, but half of 10 fail
    for (let i = 0; i < 9; i++) b.record(i % 2 === 0, i);
    expect(b.state).toBe("closed");
    b.record(false, 9);
    expect(b.state).toBe("open");
  });

  it("old failures leave the window", () => {
    const { b } = make();
    for (let i = 0; i < 8; i++) b.record(i % 2 === 0, i);
    for (let i = 0; i < 8; i++) b.record(true, 20_000 + i);
    b.record(false, 20_010);
    b.record(true, 20_011);
    expect(b.state).toBe("closed");
  });

  it("lets exactly one half-open probe through after the cooldown; success closes", () => {
    const { b, moves } = make();
    for (let i = 0; i < 3; i++) b.record(false, i);
    expect(b.allow(999)).toBe(false);
    expect(b.peek(1_100)).toBe("half_open");
    expect(b.allow(1_100)).toBe(true);
    expect(b.allow(1_101)).toBe(false); // the probe is in flight
    b.record(true, 1_200);
    expect(b.state).toBe("closed");
    expect(b.allow(1_201)).toBe(true);
    expect(moves).toEqual(["closed->open", "open->half_open", "half_open->closed"]);
  });

  it("a failed probe opens the circuit for another cooldown", () => {
    const { b } = make();
    for (let i = 0; i < 3; i++) b.record(false, i);
    expect(b.allow(1_100)).toBe(true);
    b.record(false, 1_150);
    expect(b.state).toBe("open");
    expect(b.allow(2_000)).toBe(false);
    expect(b.allow(2_200)).toBe(true);
  });

  it("a probe released without outcome frees the slot", () => {
    const { b } = make();
    for (let i = 0; i < 3; i++) b.record(false, i);
    expect(b.allow(1_100)).toBe(true);
    b.release();
    expect(b.allow(1_101)).toBe(true);
  });

  it("a probe that never reports back stops blocking after another cooldown", () => {
    const { b } = make();
    for (let i = 0; i < 3; i++) b.record(false, i);
    expect(b.allow(1_100)).toBe(true);
    expect(b.allow(1_500)).toBe(false);
    expect(b.allow(2_200)).toBe(true);
  });

  it("tells how long until it lets a request through: the cooldown's end, or a moment while its probe is out", () => {
    const { b } = make();
    expect(b.retryInMs(0)).toBe(0);
    for (let i = 0; i < 3; i++) b.record(false, i); // opened at 2, cooldown 1000
    expect(b.retryInMs(302)).toBe(700);
    expect(b.retryInMs(1_002)).toBe(0);
    expect(b.allow(1_100)).toBe(true); // the probe
    expect(b.retryInMs(1_100)).toBe(PROBE_WAIT_MS);
    expect(b.retryInMs(1_900)).toBe(200); // the probe slot frees after a cooldown anyway
    b.record(false, 1_950); // failed: another cooldown from then
    expect(b.retryInMs(2_000)).toBe(950);
  });

  it("after the clock steps back an hour, an open circuit cools down from the step on, not for the hour more", () => {
    const { b } = make();
    const hour = 3_600_000;
    for (let i = 0; i < 3; i++) b.record(false, hour + i); // opened an hour ahead, cooldown 1000
    // An NTP correction: the clock is back at 0.
    expect(b.allow(0)).toBe(false);
    expect(b.retryInMs(0)).toBe(1_000);
    expect(b.peek(1_000)).toBe("half_open");
    expect(b.allow(1_000)).toBe(true); // the probe
  });

  it("after the clock steps back an hour, a probe that never reports back stops blocking a cooldown after the step", () => {
    const { b } = make();
    const hour = 3_600_000;
    for (let i = 0; i < 3; i++) b.record(false, i);
    expect(b.allow(hour)).toBe(true); // the probe, taken an hour ahead
    expect(b.allow(0)).toBe(false);
    expect(b.retryInMs(0)).toBe(PROBE_WAIT_MS);
    expect(b.allow(1_000)).toBe(true);
  });

  it("after the clock steps back an hour, failures counted an hour ahead no longer count toward the error rate", () => {
    const { b } = make();
    const ahead = 3_600_000 + 5_000;
    // 4 of 9 failed, never 3 in a row, fewer than minRequests (10): the circuit stays closed.
    for (const ok of [false, true, false, true, false, true, false, true, true]) b.record(ok, ahead);
    expect(b.state).toBe("closed");
    // An NTP correction: the clock is back at 0, and one request fails.
    b.record(false, 0);
    expect(b.state).toBe("closed");
    expect(b.allow(1)).toBe(true);
  });
});
