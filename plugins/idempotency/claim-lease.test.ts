// A request with an Idempotency-Key that runs longer than the 15-minute claim lease keeps its claim (the audit: a
// 16-minute stream lost it, and a retry with the same key and body ran and was billed a second time). The process
// renews its live claims every 5 minutes; the clock (Date and setInterval) is vitest's, advanced 16 minutes while
// the stream runs.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, postJson, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, policyConfig } from "../../test/helpers/policy-config.ts";
import { claimLeases } from "./claim-lease.ts";

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
