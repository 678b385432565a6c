import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, postJson, keyEntry, testKey, type TestGateway } from "../../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../../test/upstreams/openai.ts";
import { auth, chat, KEY, OTHER, policyConfig } from "../../test/helpers/policy-config.ts";
import { slowStoreCall } from "../../test/helpers/slow-store.ts";

const SECOND = testKey("other2");
const PATIENT = testKey("patient");
const EXACT = testKey("exact");
const SMALL = testKey("small");
const DEBT = testKey("debt");

describe("rate-limit plugin", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl, {
      acme: { rate_limits: { rpm: 3 }, keys: [keyEntry("k1", KEY), keyEntry("patient", PATIENT, { rate_limits: { rpm: 100, tpm: 1000 } }),
        keyEntry("exact", EXACT, { rate_limits: { rpm: 100, tpm: 1200 } }), keyEntry("small", SMALL, { rate_limits: { rpm: 100, tpm: 50 } }),
        keyEntry("debt", DEBT, { rate_limits: { rpm: 100, tpm: 60 } })] },
      other: { keys: [keyEntry("k2", OTHER, { rate_limits: { rpm: 100, tpm: 400 } }), keyEntry("k3", SECOND)], project_rate_limits: { rpm: 4 } },
    }));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });
  const url = () => `${gw.baseURL}/chat/completions`;

  it("allows rpm requests, then 429 RATE_LIMITED with Retry-After; headers on every response", async () => {
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await postJson(url(), chat(), auth(KEY)));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(seen.map((r) => r.headers.get("x-ratelimit-remaining-requests"))).toEqual(["2", "1", "0", "0"]);
    for (const r of seen) {
      expect(Number(r.headers.get("x-ratelimit-reset-requests"))).toBeGreaterThan(0);
      expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(r.headers.get("x-ratelimit-remaining-requests"));
    }
    const refused = seen[3]!;
    expect(refused.json.error).toMatchObject({ code: "RATE_LIMITED", type: "rate_limit_error" });
    // 3 per minute refill one every 20 s.
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(20);
  });

  it("charges tokens from an estimate and corrects them to the real usage", async () => {
    const r1 = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 200 }), auth(OTHER));
    expect(r1.status).toBe(200);
    const used = r1.json.usage.total_tokens;
    const left = Number(r1.headers.get("x-ratelimit-remaining-tokens"));
    // The real usage was far below max_tokens: the difference is given back, in this answer's headers already.
    expect(left).toBeGreaterThan(400 - 200);
    expect(left).toBeLessThanOrEqual(400 - used + 7); // 400 a minute refill ~7 a second
    expect(r1.headers.get("x-ratelimit-remaining")).toBe(String(left));
    // And in the store: the next request starts from there.
    const r2 = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 1 }), auth(OTHER));
    expect(Number(r2.headers.get("x-ratelimit-remaining-tokens"))).toBeGreaterThan(400 - 200);
    expect(Number(r2.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(400 - used);
    // A request that cannot fit the tokens left is refused on tokens.
    const r3 = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 390 }), auth(OTHER));
    expect(r3.status).toBe(429);
    expect(r3.headers.get("x-ratelimit-remaining-tokens")).not.toBeNull();
  });

  it("a JSON answer's token headers show what its real usage left, not the estimate charged before dispatch", async () => {
    const r = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 600 }), auth(EXACT));
    expect(r.status).toBe(200);
    const used = r.json.usage.total_tokens;
    expect(used).toBeLessThan(100); // far below the 600 the estimate charged
    const remaining = Number(r.headers.get("x-ratelimit-remaining-tokens"));
    // 1200 a minute refill 20 a second: the answer took well under one.
    expect(remaining).toBeGreaterThanOrEqual(1200 - used - 1);
    expect(remaining).toBeLessThanOrEqual(1200 - used + 20);
    expect(r.headers.get("x-ratelimit-remaining")).toBe(String(remaining));
    // What the store holds agrees: the next request starts from there.
    const next = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 1 }), auth(EXACT));
    expect(Number(next.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(remaining + 20);
  });

  it("an estimate larger than the window is corrected from what was charged (the window), not given back in full", async () => {
    // max_tokens 100 (the model's most) against tpm 50: the check charges the whole window (50), not the ~120 estimated.
    const r = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 100 }), auth(SMALL));
    expect(r.status).toBe(200);
    const used = r.json.usage.total_tokens;
    expect(used).toBeGreaterThan(10);
    expect(Number(r.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(50 - used + 1);
    // The store still holds the real usage: the window was not given back in full.
    const [w] = await gw.gateway.store.rateState([{ key: "key:acme:small:tpm", limit: 50 }], Date.now());
    expect(w!.remaining).toBeLessThanOrEqual(50 - used + 1);
  });

  it("a request larger than the whole window is admitted into a full window, then its real usage holds the key back", async () => {
    // docs/policies.md (rate-limit): not refused outright. It used 160 tokens against tpm 60; the window is in debt by
    // the 100 over, so the next request waits for the window to refill past that, more than a minute.
    fake.hook = (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "chatcmpl-big", object: "chat.completion", created: 0, model: req.body.model,
        choices: [{ index: 0, message: { role: "assistant", content: "A" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 150, completion_tokens: 10, total_tokens: 160 },
      }));
      return true;
    };
    try {
      const big = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 100 }), auth(DEBT));
      expect(big.status).toBe(200);
      expect(big.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
      const next = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 1 }), auth(DEBT));
      expect(next.status).toBe(429);
      // (160 used - 60 window + this request's own estimate) / 60 a minute: well over a minute.
      expect(Number(next.headers.get("retry-after"))).toBeGreaterThan(100);
    } finally {
      fake.hook = undefined;
    }
  });

  it("gives a stream's and a failed request's unused estimate back before the answer completes, even from a slow store", async () => {
    // Each correction takes 300 ms, as a round trip to a remote store can: one made after the answer would show.
    const restore = slowStoreCall(gw.gateway.store, "rateAdjust");
    const remaining = (r: { headers: Headers }) => Number(r.headers.get("x-ratelimit-remaining-tokens"));
    try {
      const streamed = await fetch(url(), {
        method: "POST",
        headers: { "content-type": "application/json", ...auth(PATIENT) },
        body: JSON.stringify(chat("openai/gpt-4o-mini", { max_tokens: 400, stream: true })),
      });
      const afterEstimate = remaining(streamed);
      expect(afterEstimate).toBeLessThanOrEqual(1000 - 400);
      expect(await streamed.text()).toContain("data: [DONE]");
      const next = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 1 }), auth(PATIENT));
      expect(remaining(next)).toBeGreaterThan(afterEstimate + 300); // most of the 400 asked for came back

      fake.failures.push(...Array.from({ length: 5 }, () => ({ kind: "status" as const, status: 500 })));
      const failed = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 400 }), auth(PATIENT));
      fake.failures.length = 0;
      expect(failed.status).toBe(502);
      // Nothing was used: all of the 400 came back, as the error's own headers show ...
      expect(remaining(failed)).toBeGreaterThan(remaining(next) - 50);
      // ... and the store had it back before the error was sent (else the next check would meet the 400 still charged).
      const after = await postJson(url(), chat("openai/gpt-4o-mini", { max_tokens: 1 }), auth(PATIENT));
      expect(remaining(after)).toBeGreaterThan(remaining(failed) - 50);
    } finally {
      restore();
    }
  });

  it("project_rate_limits cap the project across its keys", async () => {
    const g = await startTestGateway(policyConfig(fake.baseUrl, {
      other: { keys: [keyEntry("k2", OTHER), keyEntry("k3", SECOND)], project_rate_limits: { rpm: 4 } },
    }));
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await postJson(`${g.baseURL}/chat/completions`, chat(), auth(i % 2 ? SECOND : OTHER))).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await g.close();
    }
  });
});
