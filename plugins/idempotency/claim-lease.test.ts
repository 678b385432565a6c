// A request with an Idempotency-Key that runs longer than the 15-minute claim lease keeps its claim (the audit: a
// 16-minute stream lost it, and a retry with the same key and body ran and was billed a second time). The process
// renews its live claims every 5 minutes; the clock (Date and setInterval) is vitest's, advanced 16 minutes while
// the stream runs.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ClaimRenewal, Store } from "../../core/store/types.ts";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { LEASE_MS, RENEW_EVERY_MS, claimLeases } from "./claim-lease.ts";

describe.each(["memory", "sqlite"])("idempotency claims on a %s store", (kind) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten" });
    const store = kind === "memory" ? { kind: "memory" } : { kind: "sqlite", path: "./data/g.db" };
    gw = await startTestGateway(policyConfig(fake.baseUrl, { store }));
  });
  afterEach(() => { vi.useRealTimers(); });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("a stream running past the lease keeps its key: a retry waits and replays it instead of running and billing again", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"], now: Date.UTC(2026, 11, 10, 12), shouldAdvanceTime: true });
    fake.pace = (body) => (body.stream ? 200 : undefined); // ~2 s of real time
    const store = gw.gateway.store;
    const headers = auth(undefined, { "idempotency-key": `long-stream-${kind}` });
    const body = { ...chat("openai/gpt-4o-mini", { max_tokens: 100 }), stream: true };
    const a = postJson(`${gw.baseURL}/chat/completions`, body, headers);
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1), { timeout: 2_000, interval: 20 });
    expect(claimLeases(store).size).toBe(1);

    await vi.advanceTimersByTimeAsync(16 * 60_000); // three renewal sweeps; the first lease would have ended at 15 min
    const b = await postJson(`${gw.baseURL}/chat/completions`, body, headers);
    const first = await a;
    expect(first.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.text).toBe(first.text);
    expect(fake.requests).toHaveLength(1); // one upstream call, one bill
    expect(claimLeases(store).size).toBe(0); // saved: nothing left to renew
  });

  it("a failed request's claim stops being renewed, and a retry runs", async () => {
    const headers = auth(undefined, { "idempotency-key": `fails-${kind}` });
    const before = fake.requests.length;
    fake.failures.push({ kind: "status", status: 400 });
    const r = await postJson(`${gw.baseURL}/chat/completions`, chat(), headers);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(claimLeases(gw.gateway.store).size).toBe(0);
    const again = await postJson(`${gw.baseURL}/chat/completions`, chat(), headers);
    expect(again.status).toBe(200);
    expect(fake.requests.length).toBe(before + 2);
  });
});

// A store outage (a 25 s Redis client pause) made every renewal sweep in it fail, and the next one came a whole
// period (10 s) after the store was back: a live request's claim looked unrenewed for that long more, and its
// duplicates were told 409. A failed sweep is now tried again every second, so the claims are renewed as soon as the
// store answers. The clock is vitest's.
describe("a claim renewal the store failed", () => {
  afterEach(() => { vi.useRealTimers(); });

  it("renews a live claim within about a second of the store coming back, not a renewal period later", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval", "setTimeout", "clearTimeout"] });
    let down = true;
    const renewedAt: number[] = [];
    const store = {
      async renewClaims(_claims: ClaimRenewal[]) {
        if (down) throw new Error("store unavailable");
        renewedAt.push(Date.now());
      },
    } as unknown as Store;
    const leases = claimLeases(store);
    const claim = { scope: "s", owner: "o", leaseMs: LEASE_MS };
    leases.add(claim);
    try {
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS + 500); // the period's sweep fails: the store is down
      expect(renewedAt).toEqual([]);
      down = false;
      const backAt = Date.now();
      await vi.advanceTimersByTimeAsync(2_000);
      expect(renewedAt.length).toBeGreaterThan(0);
      expect(renewedAt[0]! - backAt).toBeLessThanOrEqual(1_000);
    } finally {
      leases.delete(claim);
      leases.stop();
    }
  });
});
