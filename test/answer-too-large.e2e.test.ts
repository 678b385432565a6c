// An upstream answer past the gateway's size bounds (a JSON answer over 16 MiB, a stream whose first event is over
// 16 MiB) was retried on the same endpoint: the provider generated, and billed, the same too-large answer again and
// again, and the client, told nothing against it, retried the 502 too. Now the endpoint is not asked again (the same
// request would be as large), the model's next endpoint still is, and the client gets a 502 that names the bound and
// the setting that raises it, with x-should-retry: false and no Retry-After.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, ledgerRecordOf, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("toolarge");
const BOUND = 16 * 1024 * 1024;
/** Over both default bounds (a JSON answer's bytes, a stream event's characters). */
const OVER = BOUND + 1024 * 1024;

/** The fake's answer for the upstream model `big` (or `medium`): one chat completion (or first stream event) past the bound. */
function tooLarge(stream: boolean, res: ServerResponse, size = OVER): void {
  const content = "x".repeat(size);
  if (stream) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "big", choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }] })}\n\n`);
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({
    id: "c1", object: "chat.completion", created: 1, model: "big",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: size >> 2, total_tokens: 5 + (size >> 2) },
  }));
}

let fake: FakeOpenAI;
let gw: TestGateway;
/** A gateway whose server.upstream_limits are 4 KiB: an 8 KiB answer (upstream model `medium`) is past them. */
let small: TestGateway;
const SMALL = 4096;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.hook = (rec, res) => {
    if (rec.path !== "/v1/chat/completions" || (rec.body.model !== "big" && rec.body.model !== "medium")) return false;
    tooLarge(rec.body.stream === true, res, rec.body.model === "big" ? OVER : 2 * SMALL);
    return true;
  };
  const pricing = { input: "0.000001", output: "0.000002" };
  small = await startTestGateway({
    server: { upstream_limits: { answer_bytes: SMALL, event_chars: SMALL } },
    store: { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/medium": { endpoints: [{ provider: "up", model: "medium", pricing }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  gw = await startTestGateway({
    store: { kind: "sqlite", path: "./gateway.db", spool_dir: "./spool" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    providers: {
      up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" },
      other: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "test/big": { endpoints: [{ provider: "up", model: "big", pricing }] },
      "test/big-then-small": { endpoints: [{ provider: "up", model: "big", pricing }, { provider: "other", model: "small", pricing }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
}, 30_000);

afterAll(async () => {
  await small?.close();
  await gw?.close();
  await fake?.close();
});

/** Upstream calls for each upstream model. */
const calls = (model: string) => fake.requests.filter((r) => r.path === "/v1/chat/completions" && r.body.model === model).length;

const ask = (requestId: string, model: string, stream = false) =>
  postJson(`${gw.baseURL}/chat/completions`, { model, stream, messages: [{ role: "user", content: "Write a lot" }] }, { authorization: `Bearer ${KEY}`, "x-request-id": requestId });

const upstreamErrors = async () =>
  (await gw.gateway.metrics.registry.getSingleMetric("gateway_upstream_duration_seconds")!.get()).values
    .find((v) => (v as { metricName?: string }).metricName === "gateway_upstream_duration_seconds_count" && v.labels.provider === "up" && v.labels.outcome === "error")?.value ?? 0;

describe("an answer past the size bounds", () => {
  it("a JSON answer over 16 MiB: the endpoint is asked once, and the client is told the bound, the setting and not to retry", async () => {
    const before = calls("big"), errorsBefore = await upstreamErrors();
    const r = await ask("big-json", "test/big");
    expect(calls("big") - before, "upstream calls for the one endpoint").toBe(1);
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "up", reason: "answer_too_large", limit_bytes: BOUND, setting: "server.upstream_limits.answer_bytes" } });
    expect(r.json.error.message).toContain(`${BOUND} bytes`);
    expect(r.json.error.message).toContain("server.upstream_limits.answer_bytes");
    expect(r.headers.get("x-should-retry")).toBe("false");
    expect(r.headers.get("retry-after")).toBeNull();
    expect(r.headers.get("retry-after-ms")).toBeNull();
    const rec = await ledgerRecordOf(gw, "big-json");
    expect(rec).toMatchObject({ status: 502, outcome: "error", attempts: 1, provider: "up" });
    expect(r.json.error.details.attempts).toEqual([expect.objectContaining({ provider: "up", status: 502, errorCode: "UPSTREAM_ERROR" })]);
    expect(Number(rec.costUsd)).toBe(0); // nothing of the answer was read: no usage to bill
    expect((await upstreamErrors()) - errorsBefore, "failed upstream attempts counted").toBe(1);
  });

  it("a stream whose first event is over 16 MiB: the endpoint is asked once, and the client gets the same 502 before any stream", async () => {
    const before = calls("big");
    const r = await ask("big-stream", "test/big", true);
    expect(calls("big") - before, "upstream calls for the one endpoint").toBe(1);
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "UPSTREAM_ERROR", details: { provider: "up", reason: "event_too_large", limit_chars: BOUND, setting: "server.upstream_limits.event_chars" } });
    expect(r.json.error.message).toContain(`${BOUND} characters`);
    expect(r.json.error.message).toContain("server.upstream_limits.event_chars");
    expect(r.headers.get("x-should-retry")).toBe("false");
    expect(r.headers.get("retry-after")).toBeNull();
    expect(await ledgerRecordOf(gw, "big-stream")).toMatchObject({ status: 502, outcome: "error", attempts: 1 });
  });

  it("the model's next endpoint still serves, with the retry it would have had alone: the too-large endpoint uses none of the budget and is not asked again", async () => {
    for (const stream of [false, true]) {
      const big = calls("big"), small = calls("small");
      fake.failures.push({ kind: "status", status: 503, body: { error: { message: "overloaded", type: "server_error" } } }); // small's first answer
      const r = await ask(`big-then-small-${stream}`, "test/big-then-small", stream);
      expect(r.status, `stream: ${stream}`).toBe(200);
      expect(calls("big") - big, `stream: ${stream}`).toBe(1);
      expect(calls("small") - small, `stream: ${stream}`).toBe(2);
      const rec = await ledgerRecordOf(gw, `big-then-small-${stream}`);
      expect(rec).toMatchObject({ status: 200, outcome: "ok", provider: "other", attempts: 3 });
      if (!stream) expect(r.json.providerMetadata.gateway.modelAttempts.map((a: { provider: string; status: number }) => [a.provider, a.status])).toEqual([["up", 502], ["other", 502], ["other", 200]]);
    }
  });

  it("server.upstream_limits sets the bounds: an 8 KiB answer past 4 KiB ones is refused the same way, on every client protocol", async () => {
    const before = calls("medium");
    const chat = await postJson(`${small.baseURL}/chat/completions`, { model: "test/medium", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(chat.status).toBe(502);
    expect(chat.json.error).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: SMALL, setting: "server.upstream_limits.answer_bytes" } });
    expect(chat.json.error.message).toContain(`larger than ${SMALL} bytes`);
    // A Messages client, its stream translated from the chat upstream's: the first event is past the bound.
    const messages = await postJson(`${small.baseURL}/messages`, { model: "test/medium", max_tokens: 64, stream: true, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(messages.status).toBe(502);
    expect(messages.headers.get("x-should-retry")).toBe("false");
    expect(messages.json).toMatchObject({ type: "error", error: { code: "UPSTREAM_ERROR", details: { reason: "event_too_large", limit_chars: SMALL, setting: "server.upstream_limits.event_chars" } } });
    expect(calls("medium") - before, "one upstream call each").toBe(2);
  });
});
