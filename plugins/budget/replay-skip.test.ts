import { describe, expect, it } from "vitest";
import { replaySkipsReservation } from "./replay-skip.ts";

const order = (...names: string[]) => ({ pipeline: names.map((name) => ({ name })) }) as never;

describe("replaySkipsReservation", () => {
  it("lets a replay through on the default order (only rate-limit between budget and idempotency)", () => {
    expect(replaySkipsReservation(order("auth", "allowlist", "budget", "rate-limit", "idempotency", "response-cache", "router"))).toBe(true);
  });

  it("reserves when a response cache (or any plugin that may answer) sits between them: it would bill hits unchecked", () => {
    expect(replaySkipsReservation(order("auth", "budget", "rate-limit", "response-cache", "idempotency", "router"))).toBe(false);
    expect(replaySkipsReservation(order("auth", "budget", "my-plugin", "idempotency", "router"))).toBe(false);
    expect(replaySkipsReservation(order("auth", "budget", "guardrails", "idempotency", "router"))).toBe(false);
  });

  it("reserves when cache-marker sits between them: it edits the body the answer is kept under, so the look could not find it", () => {
    expect(replaySkipsReservation(order("auth", "budget", "cache-marker", "idempotency", "router"))).toBe(false);
    expect(replaySkipsReservation(order("auth", "allowlist", "budget", "rate-limit", "idempotency", "cache-marker", "router"))).toBe(true);
  });

  it("reserves when idempotency runs before the budget or not at all", () => {
    expect(replaySkipsReservation(order("auth", "idempotency", "budget", "router"))).toBe(false);
    expect(replaySkipsReservation(order("auth", "budget", "router"))).toBe(false);
    expect(replaySkipsReservation({} as never)).toBe(false);
  });
});
