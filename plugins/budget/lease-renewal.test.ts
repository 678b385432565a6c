// A request that runs longer than the 15-minute budget lease keeps its hold (the audit: a 16-minute stream lost it and
// a second request was admitted past the limit, $1.736 spent of $1.2). The process renews the holds of its live
// requests every 5 minutes; the clock (Date and setInterval) is vitest's, advanced 16 minutes while the stream runs.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { periodOf } from "../../core/store/periods.ts";
import { toPico } from "../../core/money/money.ts";
import { budgetLeases } from "./index.ts";

const USD = "0.0005";

describe.each(["memory", "sqlite"])("budget holds on a %s store", (kind) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten" });
    const store = kind === "memory" ? { kind: "memory" } : { kind: "sqlite", path: "./data/g.db" };
    gw = await startTestGateway(policyConfig(fake.baseUrl, { store, acme: { budget: { usd: USD, period: "month" } } }));
  });
  afterEach(() => { vi.useRealTimers(); });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("a stream running past the lease keeps its hold, so a second request finds no room; the hold goes when it ends", async () => {
    const start = Date.UTC(2026, 11, 10, 12);
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"], now: start, shouldAdvanceTime: true });
    fake.pace = (body) => (body.stream ? 200 : undefined); // ~2 s of real time
    const store = gw.gateway.store;
    const month = periodOf("month", start);
    const body = chat("openai/gpt-4o-mini", { max_tokens: 100 });
    const a = postJson(`${gw.baseURL}/chat/completions`, { ...body, stream: true }, auth());
    await vi.waitFor(async () => expect(await store.reserved("acme", month.key, Date.now())).toBeGreaterThan(0n), { timeout: 2_000, interval: 20 });
    const held = await store.reserved("acme", month.key, Date.now());
    expect(held * 2n).toBeGreaterThan(toPico(USD)); // one request's worst case fits, two do not
    expect(budgetLeases(store).size).toBe(1);

    await vi.advanceTimersByTimeAsync(16 * 60_000); // three renewal sweeps; the first lease would have ended at 15 min
    expect(await store.reserved("acme", month.key, Date.now())).toBe(held);
    const b = await postJson(`${gw.baseURL}/chat/completions`, body, auth());
    expect(b.status).toBe(402);
    expect(b.json.error.code).toBe("BUDGET_EXCEEDED");

    expect((await a).status).toBe(200);
    expect(await store.reserved("acme", month.key, Date.now())).toBe(0n);
    expect(budgetLeases(store).size).toBe(0); // nothing left to renew
    const spent = await store.spent("acme", month.key, month.start);
    expect(spent).toBeLessThanOrEqual(toPico(USD));
  });
});
