// An upstream's sub-second Retry-After reaches the client as sent: Retry-After rounds up to whole seconds, so the
// exact wait goes out as retry-after-ms too (which the openai and Anthropic SDKs read first), as the gateway's own 429.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenAI } from "./upstreams/openai.ts";
import { startOneUpstreamGateway } from "./helpers/one-upstream-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("retryms");

let up: FakeOpenAI;
let gw: TestGateway;
let close: () => Promise<void>;

// Longer than the gateway waits itself: the endpoint is given up and the client told when to come back.
beforeAll(async () => {
  ({ up, gw, close } = await startOneUpstreamGateway(KEY, { backoff_ms: 1, max_retry_after_ms: 1000 }));
});
afterAll(() => close?.());

describe("an upstream's retry-after-ms", () => {
  it("1500 ms: the client gets retry-after-ms ~1500 beside Retry-After: 2", async () => {
    up.failures.push({ kind: "status", status: 429, headers: { "retry-after-ms": "1500" } });
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "t/m", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(502);
    expect(r.headers.get("retry-after")).toBe("2");
    const ms = Number(r.headers.get("retry-after-ms"));
    expect(ms).toBeGreaterThan(1300); // less the moments since the upstream said it
    expect(ms).toBeLessThanOrEqual(1500);
  });

  it("whole seconds: both headers say the same wait", async () => {
    up.failures.push({ kind: "status", status: 429, headers: { "retry-after": "3" } });
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "t/m", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.headers.get("retry-after")).toBe("3");
    expect(Number(r.headers.get("retry-after-ms"))).toBeGreaterThan(2800);
  });
});
