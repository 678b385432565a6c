// Every endpoint of a model skipped for an open circuit: the 502 says when the first of them lets a probe through
// (Retry-After, retry-after-ms), so an SDK's retry lands after the cooldown, not inside it a second later.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { type FakeOpenAI } from "./upstreams/openai.ts";
import { startOneUpstreamGateway } from "./helpers/one-upstream-gateway.ts";
import { postJson, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("cbretry");
const COOLDOWN_MS = 2000;

let up: FakeOpenAI;
let gw: TestGateway;
let close: () => Promise<void>;

const chat = () => postJson(`${gw.baseURL}/chat/completions`, { model: "t/m", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });

beforeAll(async () => {
  ({ up, gw, close } = await startOneUpstreamGateway(KEY, { backoff_ms: 1, circuit_breaker: { consecutive_failures: 2, cooldown_ms: COOLDOWN_MS } }));
});
afterAll(() => close?.());

describe("circuit open on every endpoint", () => {
  it("the 502 carries the time left of the cooldown, and the SDK's retry after that wait is served", async () => {
    up.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 500 });
    // The circuit opens inside this request, so not before it is sent (its answer reaches us later, on a loaded
    // machine tens of milliseconds later).
    const openedAfter = Date.now();
    expect((await chat()).status).toBe(502); // two failures in a row: the circuit opens

    const r = await chat();
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain("circuit open");
    const ms = Number(r.headers.get("retry-after-ms"));
    expect(ms).toBeGreaterThan(COOLDOWN_MS - 1000);
    expect(ms).toBeLessThanOrEqual(COOLDOWN_MS);
    expect(r.headers.get("retry-after")).toBe("2");

    const seen: number[] = [];
    const client = new OpenAI({
      apiKey: KEY, baseURL: gw.baseURL, maxRetries: 1,
      fetch: (async (url: any, init: any) => {
        const res = await fetch(url, init);
        seen.push(res.status);
        return res;
      }) as typeof fetch,
    });
    const answer = await client.chat.completions.create({ model: "t/m", messages: [{ role: "user", content: "hi" }] });
    expect(answer.choices[0]!.message.content).toContain("Hello");
    expect(seen).toEqual([502, 200]); // refused while open, then the half-open probe
    expect(Date.now() - openedAfter).toBeGreaterThanOrEqual(COOLDOWN_MS - 50);
  });
});
