// Fallback and retries end to end: real gateway, fake OpenAI upstreams failing in every retryable way.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createServer } from "node:net";
import { startTestGateway, testKey, keyEntry, postJson, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("routing");

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let gw: TestGateway;

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }], ...extra }, { authorization: `Bearer ${KEY}` });

beforeAll(async () => {
  alpha = await startFakeOpenAI({ text: "alpha answers" });
  beta = await startFakeOpenAI({ text: "beta answers" });
  const dead = await closedPort();
  const provider = (url: string) => ({ protocol: "openai", base_url: url, api_key: "sk-fake-upstream", timeout_ms: 400 });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 10, max_retry_after_ms: 5000, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: { alpha: provider(alpha.baseUrl), beta: provider(beta.baseUrl), dead: provider(`http://127.0.0.1:${dead}/v1`) },
    models: {
      "test/duo": { context_window: 1000, max_tokens: 100, endpoints: [{ provider: "alpha", model: "a-model" }, { provider: "beta", model: "b-model" }] },
      "test/solo": { endpoints: [{ provider: "alpha", model: "a-solo" }] },
      "test/backup": { endpoints: [{ provider: "beta", model: "b-backup" }] },
      "test/sorted": { endpoints: [{ provider: "alpha", model: "a-model", pricing: { input: "0.000002", output: "0.000002" } }, { provider: "beta", model: "b-model", pricing: { input: "0.000001", output: "0.000001" } }] },
      "test/tri": { endpoints: [{ provider: "dead", model: "x" }, { provider: "alpha", model: "a-model" }, { provider: "beta", model: "b-model" }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

beforeEach(() => {
  alpha.failures.length = 0;
  beta.failures.length = 0;
  alpha.requests.length = 0;
  beta.requests.length = 0;
});

describe("fallback across providers", () => {
  it("a 500 from the first provider costs one retry on the next", async () => {
    alpha.failures.push({ kind: "status", status: 500 });
    const r = await chat("test/duo");
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe("beta answers");
    expect(r.headers.get("x-mg-resolved-provider")).toBe("beta");
    const meta = r.json.providerMetadata.gateway;
    expect(meta.resolvedProvider).toBe("beta");
    expect(meta.modelAttempts).toMatchObject([
      { model: "test/duo", provider: "alpha", status: 502, errorCode: "UPSTREAM_ERROR" },
      { model: "test/duo", provider: "beta", status: 200 },
    ]);
    expect(typeof meta.modelAttempts[0].latencyMs).toBe("number");
    expect(beta.requests[0]!.body.model).toBe("b-model");
  });

  it("a refused connection falls through to the next provider", async () => {
    const r = await chat("test/tri");
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.errorCode ?? a.status])).toEqual([["dead", "UPSTREAM_ERROR"], ["alpha", 200]]);
  });

  it("an upstream that hangs past the timeout is abandoned for the next one", async () => {
    alpha.failures.push({ kind: "hang" });
    const r = await chat("test/duo");
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.errorCode ?? a.status])).toEqual([["alpha", "UPSTREAM_TIMEOUT"], ["beta", 200]]);
    // Abandoned at its timeout_ms (400), not whenever undici's half-second timer ticks.
    const waited = r.json.providerMetadata.gateway.modelAttempts[0].latencyMs;
    expect(waited).toBeGreaterThanOrEqual(399);
    expect(waited).toBeLessThan(500);
  });

  it("a reset connection falls back too", async () => {
    alpha.failures.push({ kind: "reset" });
    const r = await chat("test/duo");
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.resolvedProvider).toBe("beta");
  });

  it("a 429 with Retry-After on a lone provider: waits as told, then retries it", async () => {
    alpha.failures.push({ kind: "status", status: 429, headers: { "retry-after": "1" }, body: { error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } } });
    const times: number[] = [];
    alpha.hook = () => { times.push(Date.now()); return false; };
    try {
      const r = await chat("test/solo");
      expect(r.status).toBe(200);
      expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.status])).toEqual([["alpha", 502], ["alpha", 200]]);
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
    } finally {
      alpha.hook = undefined;
    }
  });

  it("a Retry-After longer than the gateway waits is passed on to the client instead", async () => {
    alpha.failures.push({ kind: "status", status: 429, headers: { "retry-after": "60" } });
    const r = await chat("test/solo");
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.headers.get("retry-after")).toBe("60");
    expect(alpha.requests).toHaveLength(1);
  });

  it("408 is retried", async () => {
    alpha.failures.push({ kind: "status", status: 408 });
    const r = await chat("test/duo");
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.modelAttempts[0]).toMatchObject({ provider: "alpha", status: 504, errorCode: "UPSTREAM_TIMEOUT" });
  });

  it("409 (a conflict such as a lock timeout) falls back to the next provider, as the docs' table says", async () => {
    alpha.failures.push({ kind: "status", status: 409, body: { error: { message: "Lock timeout", type: "conflict", param: null, code: null } } });
    const r = await chat("test/duo");
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe("beta answers");
    expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.provider, a.status])).toEqual([["alpha", 502], ["beta", 200]]);
  });

  it("a 4xx request error is never retried", async () => {
    alpha.failures.push({ kind: "status", status: 400, body: { error: { message: "Invalid 'messages': bad", type: "invalid_request_error", param: "messages", code: null } } });
    const r = await chat("test/duo");
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.json.error.message).toContain("Invalid 'messages'");
    expect(beta.requests).toHaveLength(0);
    expect(alpha.requests).toHaveLength(1);
  });

  it("after exhaustion: 502 UPSTREAM_ERROR with every attempt in details", async () => {
    alpha.failures.push({ kind: "status", status: 500 });
    beta.failures.push({ kind: "status", status: 503 });
    const r = await chat("test/duo");
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.details.attempts).toMatchObject([
      { model: "test/duo", provider: "alpha", status: 502, errorCode: "UPSTREAM_ERROR" },
      { model: "test/duo", provider: "beta", status: 502, errorCode: "UPSTREAM_ERROR" },
    ]);
  });

  it("after exhaustion by timeouts: 504 UPSTREAM_TIMEOUT", async () => {
    alpha.failures.push({ kind: "hang" });
    beta.failures.push({ kind: "hang" });
    const r = await chat("test/duo");
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe("UPSTREAM_TIMEOUT");
    expect(r.json.error.details.attempts).toHaveLength(2);
  });

  it("order puts a provider first; only keeps the others out", async () => {
    let r = await chat("test/duo", { providerOptions: { gateway: { order: ["beta"] } } });
    expect(r.json.providerMetadata.gateway.resolvedProvider).toBe("beta");
    alpha.failures.push({ kind: "status", status: 500 }, { kind: "status", status: 500 });
    r = await chat("test/duo", { providerOptions: { gateway: { only: ["alpha"] } } });
    expect(r.status).toBe(502);
    // a lone provider gets one retry after a backoff, the excluded one none
    expect(r.json.error.details.attempts.map((a: any) => a.provider)).toEqual(["alpha", "alpha"]);
    expect(beta.requests).toHaveLength(1); // only the first request
    r = await chat("test/duo", { providerOptions: { gateway: { only: ["nobody"] } } });
    expect(r.status).toBe(400);
    expect(r.json.error.details.field).toBe("providerOptions.gateway.only");
  });
});

describe("fallback models", () => {
  it("the request's model first, then each fallback model with its own providers", async () => {
    alpha.failures.push({ kind: "status", status: 500 });
    const r = await chat("test/solo", { providerOptions: { gateway: { models: ["test/backup"] } } });
    expect(r.status).toBe(200);
    expect(r.json.providerMetadata.gateway.modelAttempts.map((a: any) => [a.model, a.provider, a.status])).toEqual([
      ["test/solo", "alpha", 502], ["test/backup", "beta", 200],
    ]);
    expect(beta.requests[0]!.body.model).toBe("b-backup");
  });

  it("an unknown fallback model is a 404 naming the field", async () => {
    const r = await chat("test/solo", { providerOptions: { gateway: { models: ["test/backup", "nope/nope"] } } });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("MODEL_NOT_FOUND");
    expect(r.json.error.details.field).toBe("providerOptions.gateway.models[1]");
  });
});

async function readStream(res: Response): Promise<string> {
  return await res.text();
}

const streamChat = (model: string) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });

describe("streams", () => {
  it("a stream that dies before its first event falls back silently", async () => {
    alpha.failures.push({ kind: "die-mid-stream", afterChunks: 0 });
    const res = await streamChat("test/duo");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-mg-resolved-provider")).toBe("beta");
    const text = await readStream(res);
    expect(text).toContain("beta");
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    expect(text).not.toContain('"error"');
  });

  it("once the first bytes went out there is no silent switch: the failure is an error event", async () => {
    alpha.failures.push({ kind: "die-mid-stream", afterChunks: 3 });
    const res = await streamChat("test/duo");
    expect(res.status).toBe(200);
    const text = await readStream(res);
    expect(text).toContain("alpha");
    const events = text.split("\n\n").filter(Boolean);
    const last = JSON.parse(events[events.length - 1]!.replace(/^data: /, ""));
    expect(last.error.code).toBe("UPSTREAM_ERROR");
    expect(text).not.toContain("[DONE]");
    expect(beta.requests).toHaveLength(0);
  });
});

/** A streamed chat answer written by hand, its first chunk held back by `delayMs` (a slow time to first token). */
function slowStream(delayMs: number) {
  return (req: { path: string; body: any }, res: import("node:http").ServerResponse): boolean => {
    if (req.path !== "/v1/chat/completions" || req.body?.stream !== true) return false;
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: unknown, finish: string | null, usage?: unknown) =>
      `data: ${JSON.stringify({ id: "chatcmpl-slow", object: "chat.completion.chunk", created: 1, model: req.body.model, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    setTimeout(() => {
      res.write(chunk({ role: "assistant", content: "" }, null));
      res.write(chunk({ content: "slow but sure" }, null));
      res.write(chunk({}, "stop"));
      res.end(chunk(null, null, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }) + "data: [DONE]\n\n");
    }, delayMs);
    return true;
  };
}

describe("sort", () => {
  it("cost picks the cheaper provider for this request", async () => {
    const r = await chat("test/sorted", { providerOptions: { gateway: { sort: "cost" } } });
    expect(r.json.providerMetadata.gateway.resolvedProvider).toBe("beta");
  });

  it("ttft follows the live measurements: after traffic, the faster provider goes first", async () => {
    // no data yet: catalog order
    expect((await chat("test/sorted", { providerOptions: { gateway: { sort: "ttft" } } })).json.providerMetadata.gateway.resolvedProvider).toBe("alpha");
    alpha.hook = slowStream(150);
    try {
      for (const only of ["alpha", "beta", "alpha", "beta"]) {
        const res = await fetch(`${gw.baseURL}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
          body: JSON.stringify({ model: "test/sorted", stream: true, messages: [{ role: "user", content: "hi" }], providerOptions: { gateway: { only: [only] } } }),
        });
        expect(res.headers.get("x-mg-resolved-provider")).toBe(only);
        await res.text();
      }
    } finally {
      alpha.hook = undefined;
    }
    const r = await chat("test/sorted", { providerOptions: { gateway: { sort: "ttft" } } });
    expect(r.json.providerMetadata.gateway.resolvedProvider).toBe("beta");
    // order still wins over sort
    const o = await chat("test/sorted", { providerOptions: { gateway: { sort: "ttft", order: ["alpha"] } } });
    expect(o.json.providerMetadata.gateway.resolvedProvider).toBe("alpha");
  });
});

describe("messages endpoint", () => {
  const messages = (model: string) =>
    postJson(`${gw.baseURL}/messages`, { model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });

  it("falls back the same way, and reports attempts in the Anthropic envelope", async () => {
    alpha.failures.push({ kind: "status", status: 503 });
    const ok = await messages("test/duo");
    expect(ok.status).toBe(200);
    expect(ok.json.type).toBe("message");
    expect(ok.json.providerMetadata.gateway.modelAttempts.map((a: any) => a.provider)).toEqual(["alpha", "beta"]);

    alpha.failures.push({ kind: "status", status: 500 });
    beta.failures.push({ kind: "status", status: 500 });
    const bad = await messages("test/duo");
    expect(bad.status).toBe(502);
    expect(bad.json.type).toBe("error");
    expect(bad.json.error.code).toBe("UPSTREAM_ERROR");
    expect(bad.json.error.details.attempts).toHaveLength(2);
  });
});
