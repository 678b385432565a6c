// A request admitted before midnight whose answer is moderated after it: the moderation call's own ledger record is
// part of that request's cost, so it is spent in the day that admitted it, as the request's record is — not in the
// new day, which never held it (the review saw the judge's cost on the new day). The wall clock is vitest's fake
// Date, advancing with real time.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestGateway, postJson, type TestGateway } from "../../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../../test/helpers/policy-config.ts";
import { periodOf } from "../../../core/store/periods.ts";

const MIDNIGHT = Date.UTC(2026, 11, 1);

describe.each(["memory", "sqlite"])("output moderation across a budget period boundary (%s store)", (kind) => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const dir = mkdtempSync(join(tmpdir(), "moderation-boundary-"));
  beforeAll(async () => {
    fake = await startFakeOpenAI({ text: "one two three four five six seven eight nine ten" });
    // The judge (asked with the judge's system prompt) answers a verdict; the request itself gets the text above.
    fake.textFor = (body) => (JSON.stringify(body.messages?.[0] ?? "").includes("content moderation classifier") ? '{"flagged": false, "categories": []}' : undefined);
    gw = await startTestGateway(policyConfig(fake.baseUrl, {
      store: kind === "sqlite" ? { kind, path: join(dir, "gw.db") } : { kind },
      acme: { budget: { usd: "1", period: "day" }, guardrails: { moderation: { judge: "openai/gpt-4o", on: ["output"], on_error: "fail_closed" } } },
    }));
  });
  afterEach(() => { vi.useRealTimers(); });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the judge's cost is spent in the day the request was admitted in, and the new day spends nothing", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: MIDNIGHT - 9_000, shouldAdvanceTime: true });
    fake.pace = (body) => (body.stream ? 150 : undefined); // the request streams for ~1.5 s
    const a = postJson(`${gw.baseURL}/chat/completions`, chat("openai/gpt-4o-mini", { stream: true }), auth());
    const store = gw.gateway.store;
    const yesterday = periodOf("day", MIDNIGHT - 1), today = periodOf("day", MIDNIGHT);
    await vi.waitFor(async () => expect(await store.reserved("acme", yesterday.key, Date.now())).toBeGreaterThan(0n), { timeout: 2_000, interval: 20 });
    vi.setSystemTime(MIDNIGHT + 1_000);
    expect((await a).status).toBe(200);

    const ledger = await store.ledger({ project: "acme" });
    const moderation = ledger.find((e) => e.endpoint === "moderation"), request = ledger.find((e) => e.endpoint === "chat");
    expect(moderation!.costPico).toBeGreaterThan(0n);
    expect(moderation!.ts).toBeGreaterThan(MIDNIGHT); // written after midnight...
    expect(moderation!.chargedAt).toBeLessThan(MIDNIGHT); // ...charged to the day that admitted the request
    expect(await store.spent("acme", today.key, today.start)).toBe(0n);
    expect(await store.spent("acme", yesterday.key, yesterday.start)).toBe(request!.costPico + moderation!.costPico);
  });
});
