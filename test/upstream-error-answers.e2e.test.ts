// An upstream's answer that is no answer (docs/routing.md, "Upstream errors"), on the shipped store (SQLite): an
// error envelope sent with status 200 went out as an empty success and was billed; an answer nested 100 000 levels
// deep crashed the response (a 500) after it was billed; an absurd Retry-After (`251606556426`, `1e+297`) was passed
// to the client as it came. Now each answer is a retried 502 UPSTREAM_ERROR, and Retry-After is a bounded integer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, policyConfig } from "./helpers/policy-config.ts";
import { MAX_RETRY_AFTER_S } from "../core/errors.ts";

/** How the fake answers a prompt that names a mode. */
function answer(prompt: string, res: ServerResponse): void {
  if (prompt.includes("ENVELOPE")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "The engine is currently overloaded", type: "server_error" } }));
  } else if (prompt.includes("DEEP")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`{"id":"x","object":"chat.completion","choices":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
  } else {
    const ra = prompt.match(/RETRY_AFTER=([\w.+-]+)/)![1]!;
    res.writeHead(429, { "content-type": "application/json", "retry-after": ra });
    res.end(JSON.stringify({ error: { message: "Rate limit reached", type: "requests" } }));
  }
}

let fake: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.hook = (rec, res) => {
    if (rec.path !== "/v1/chat/completions") return false;
    answer(JSON.stringify(rec.body.messages), res);
    return true;
  };
  gw = await startTestGateway({
    ...policyConfig(fake.baseUrl, { store: { kind: "sqlite", path: "./gateway.db", spool_dir: "./spool" } }),
    routing: { backoff_ms: 1, max_retry_after_ms: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
  });
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const calls = () => fake.requests.filter((r) => r.path === "/v1/chat/completions").length;

async function ask(requestId: string, prompt: string) {
  return postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: prompt }], max_tokens: 20 }, auth(undefined, { "x-request-id": requestId }));
}

describe("a 2xx answer that is not an answer", () => {
  it("an error envelope with status 200 is a retried 502 naming the provider and its message, not a billed success", async () => {
    const before = calls();
    const res = await ask("env-1", "ENVELOPE");
    const body = res.json;
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "up", reason: "error_answer" } });
    expect(body.error.message).toContain("Provider up answered HTTP 200 with an error: The engine is currently overloaded");
    expect(calls() - before).toBeGreaterThan(1); // retried
    const rec = await ledgerRecordOf(gw, "env-1");
    expect(rec.status).toBe(502);
    expect(Number(rec.costUsd)).toBe(0);
  });

  it("an answer nested 100 000 levels deep is a retried 502, not a 500 after billing", async () => {
    const before = calls();
    const res = await ask("deep-1", "DEEP");
    const body = res.json;
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "up", reason: "answer_too_deep" } });
    expect(calls() - before).toBeGreaterThan(1);
    const rec = await ledgerRecordOf(gw, "deep-1");
    expect(rec.status).toBe(502);
    expect(Number(rec.costUsd)).toBe(0);
  });
});

describe("an upstream's Retry-After", () => {
  it("absurd or malformed values reach the client as a bounded, digits-only Retry-After", async () => {
    for (const [i, ra] of ["251606556426", "1e+297", "99999999999"].entries()) {
      const res = await ask(`ra-${i}`, `RETRY_AFTER=${ra}`);
      expect(res.status).toBe(502);
      expect(res.headers.get("retry-after")).toBe(String(MAX_RETRY_AFTER_S));
    }
    const res = await ask("ra-ok", "RETRY_AFTER=7");
    expect(res.headers.get("retry-after")).toBe("7");
  });
});
