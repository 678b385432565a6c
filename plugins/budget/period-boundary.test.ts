// A request in flight across midnight (a daily budget's boundary): it was reserved against the day it started in, so
// its cost is spent there, not in the new day that never held it (the audit's $1.2/day budget showed $1.736 spent on
// the new day). The wall clock is injected with vitest's fake Date, advancing with real time.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { periodOf } from "../../core/store/periods.ts";

const MIDNIGHT = Date.UTC(2026, 11, 1);

describe("budget across a period boundary", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten" });
    gw = await startTestGateway(policyConfig(fake.baseUrl, { acme: { budget: { usd: "1", period: "day" } } }));
  });
  afterEach(() => { vi.useRealTimers(); });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("a request begun before midnight and done after it spends the day it was reserved in; the new day only what began in it", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: MIDNIGHT - 9_000, shouldAdvanceTime: true });
    fake.pace = (body) => (body.stream ? 150 : undefined); // A streams for ~1.5 s
    const a = postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { stream: true }), auth());
    const store = gw.gateway.store;
    const yesterday = periodOf("day", MIDNIGHT - 1), today = periodOf("day", MIDNIGHT);
    await vi.waitFor(async () => expect(await store.reserved("acme", yesterday.key, Date.now())).toBeGreaterThan(0n), { timeout: 2_000, interval: 20 });
    vi.setSystemTime(MIDNIGHT + 1_000);
    const b = await postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o"), auth());
    expect(b.status).toBe(200);
    expect((await a).status).toBe(200);

    const ledger = await store.ledger({ project: "acme" });
    const recA = ledger.find((e) => e.model === "openai/gpt-4o-mini"), recB = ledger.find((e) => e.model === "openai/gpt-4o");
    expect(recA!.costPico).not.toBe(recB!.costPico);
    expect(recA!.ts).toBeGreaterThan(MIDNIGHT); // A's record is written after midnight...
    expect(await store.spent("acme", today.key, today.start)).toBe(recB!.costPico); // ...but the new day spent only B
    expect(await store.spent("acme", yesterday.key, yesterday.start)).toBe(recA!.costPico);
    expect(await store.reserved("acme", yesterday.key, Date.now())).toBe(0n);
  });
});
