// /metrics (Prometheus) and /api/openapi.json (OpenAPI 3.1), as an SRE and a client generator see them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validate } from "@readme/openapi-parser";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("observe", true);
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
});

describe("GET /metrics", () => {
  it("exposes requests, latency histograms, in-flight, tokens and process metrics with Prometheus names", async () => {
    await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "count me" }] }, { authorization: `Bearer ${KEY}` });
    await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "count me" }] }, { authorization: `Bearer ${KEY}` });
    await postJson(`${gw.baseURL}/chat/completions`, { model: "nope/nope", messages: [{ role: "user", content: "x" }] }, { authorization: `Bearer ${KEY}` });
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/gateway_requests_total\{endpoint="chat",model="openai\/gpt-4o-mini",provider="sim",code="200"\} 2/);
    expect(text).toMatch(/gateway_requests_total\{endpoint="chat",model="unknown",provider="",code="404"\} 1/); // never the client's string
    expect(text).toMatch(/gateway_request_duration_seconds_bucket\{le="[^"]+",endpoint="chat",model="openai\/gpt-4o-mini",provider="sim"\}/);
    expect(text).toMatch(/gateway_time_to_first_byte_seconds_count\{endpoint="chat",model="openai\/gpt-4o-mini",provider="sim"\} 2/);
    expect(text).toMatch(/gateway_upstream_duration_seconds_count\{provider="sim",model="openai\/gpt-4o-mini",outcome="ok"\} 2/);
    expect(text).toMatch(/gateway_requests_in_flight\{endpoint="chat"\} 0/);
    expect(text).toMatch(/gateway_tokens_total\{(?=[^}]*direction="output")(?=[^}]*model="openai\/gpt-4o-mini")[^}]*\} [1-9]\d*/);
    expect(text).toContain("process_cpu_seconds_total");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
  });
});

describe("GET /api/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document covering every endpoint, generated from the request schemas", async () => {
    const res = await fetch(`${gw.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const chat = doc.paths["/v1/chat/completions"].post;
    expect(chat.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/ChatCompletionRequest");
    expect(doc.components.schemas.ChatCompletionRequest.properties.temperature).toEqual({ type: "number", minimum: 0, maximum: 2 });
    expect(chat.responses["200"].content["text/event-stream"]).toBeDefined();
    expect(chat.responses["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorEnvelope");
  });
});
