// The driver op against the faithful fake OpenAI /responses upstream (test/upstreams/openai-responses.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIDriver } from "./index.ts";
import { buildResponsesRequest } from "./responses.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "../../test/upstreams/openai-responses.ts";
import type { CallOptions, ProviderDriver, Target, Usage } from "../../core/contracts/provider.ts";
import { isRetryable } from "../../core/dispatch.ts";

let up: FakeOpenAIWithResponses;
let driver: ProviderDriver & { client: { close(): Promise<void> } };
const target: Target = { modelId: "openai/gpt-4.1", provider: "up", upstreamModel: "gpt-4.1", pricing: {}, nativeResponses: true };

beforeAll(async () => {
  up = await startFakeOpenAIResponses();
  driver = createOpenAIDriver("up", { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" }, { timeoutMs: 5000 });
});
afterAll(async () => {
  await driver?.close?.();
  await up?.close();
});

function call() {
  const usage: Usage[] = [];
  const marks: string[] = [];
  const options: CallOptions = {
    signal: new AbortController().signal, requestId: "r", clientHeaders: {},
    reportUsage: (u) => { usage.push(u); marks.push("usage"); },
    reportFirstToken: () => marks.push("first"),
  };
  return { options, usage, marks };
}

describe("openai driver: responses op", () => {
  it("JSON: POST /v1/responses with the body as sent (model replaced, providerOptions removed), usage reported", async () => {
    up.responses.cachedTokens = 5;
    const c = call();
    const body = { model: "openai/gpt-4.1", input: "Hi", tools: [{ type: "web_search" }], truncation: "auto", providerOptions: { gateway: { order: ["up"] } } };
    const r = await driver.responses!(body, target, c.options);
    up.responses.cachedTokens = 0;
    const sent = up.requests.at(-1)!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body).toEqual({ model: "gpt-4.1", input: "Hi", tools: [{ type: "web_search" }], truncation: "auto" });
    expect(r.kind).toBe("json");
    const json = (r as { body: any }).body;
    expect(json.output.map((o: any) => o.type)).toEqual(["web_search_call", "message"]);
    // The web_search_call is billed per call beside the tokens.
    expect(c.usage).toEqual([{ inputTokens: json.usage.input_tokens - 5, cacheReadTokens: 5, outputTokens: json.usage.output_tokens, webSearches: 1 }]);
  });

  it("stream: named events relayed with their names, first token on the first delta, usage at response.completed", async () => {
    const c = call();
    const r = await driver.responses!({ model: "x", input: "Hi", stream: true, reasoning: { effort: "low", summary: "auto" } }, { ...target, upstreamModel: "o4-mini" }, c.options);
    expect(r.kind).toBe("stream");
    const events: { event?: string; data: string }[] = [];
    for await (const e of (r as { events: AsyncIterable<{ event?: string; data: string }> }).events) events.push(e);
    expect(events.every((e) => e.event === JSON.parse(e.data).type)).toBe(true);
    expect(events.map((e) => JSON.parse(e.data).sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]!.event).toBe("response.created");
    expect(events.at(-1)!.event).toBe("response.completed");
    const final = JSON.parse(events.at(-1)!.data).response;
    expect(c.usage).toEqual([{ inputTokens: final.usage.input_tokens, outputTokens: final.usage.output_tokens, reasoningTokens: final.usage.output_tokens_details.reasoning_tokens }]);
    expect(c.usage[0]!.reasoningTokens).toBeGreaterThan(0);
    expect(c.marks).toEqual(["first", "usage"]);
  });

  it("errors map as chat's: a 400 is INVALID_REQUEST with the provider's message and param, 429 and 5xx are retryable", async () => {
    const bad = await driver.responses!({ model: "x", input: "Hi", tools: [{ type: "function", function: { name: "f" } }] }, target, call().options).catch((e) => e);
    expect(bad).toMatchObject({ status: 400, code: "INVALID_REQUEST", details: { field: "tools[0].name", upstream_status: 400 } });
    expect(bad.message).toContain("Missing required parameter: 'tools[0].name'.");
    expect(isRetryable(bad)).toBe(false);
    const gone = await driver.responses!({ model: "x", input: "Hi", previous_response_id: "resp_nope" }, target, call().options).catch((e) => e);
    expect(gone).toMatchObject({ status: 400, code: "INVALID_REQUEST", details: { field: "previous_response_id", upstream_status: 404 } });
    for (const status of [429, 503]) {
      up.failures.push({ kind: "status", status });
      const err = await driver.responses!({ model: "x", input: "Hi", stream: true }, target, call().options).catch((e) => e);
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", details: { upstream_status: status } });
      expect(isRetryable(err)).toBe(true);
    }
  });

  it("a passed-through previous_response_id continues the upstream's own conversation", async () => {
    const tools = [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
    const first: any = (await driver.responses!({ model: "x", input: "Weather?", tools }, target, call().options) as { body: unknown }).body;
    const fc = first.output.find((o: any) => o.type === "function_call");
    expect(fc).toMatchObject({ name: "get_weather", call_id: expect.stringMatching(/^call_/) });
    const second: any = (await driver.responses!({ model: "x", previous_response_id: first.id, tools, input: [{ type: "function_call_output", call_id: fc.call_id, output: "21C" }] }, target, call().options) as { body: unknown }).body;
    expect(second.output.map((o: any) => o.type)).toEqual(["message"]);
    expect(second.previous_response_id).toBe(first.id);
  });

  it("a model the gateway knows cannot reason (tags without `reasoning`) gets no reasoning knobs: Codex's reasoning and include are named dropped", async () => {
    const c = call();
    const body = { model: "x", input: "Hi", stream: true, reasoning: { effort: "medium", summary: "auto" }, include: ["reasoning.encrypted_content"], store: false };
    const r = await driver.responses!(body, { ...target, reasoning: false }, c.options);
    const sent = up.requests.at(-1)!;
    expect(sent.body).toEqual({ model: "gpt-4.1", input: "Hi", stream: true, store: false });
    expect(r.headers?.["x-mg-dropped-params"]).toBe("reasoning.effort,reasoning.summary,include.reasoning.encrypted_content");
    // Read to its end, as the relay does: a stream left unread keeps its answer's deadline armed past this file.
    if (r.kind === "stream") for await (const _ of r.events);
    // What else the client set stays: only the refused parts go.
    await driver.responses!({ model: "x", input: "Hi", reasoning: { effort: null, summary: "auto", extra: 1 }, include: ["web_search_call.action.sources", "reasoning.encrypted_content"] }, { ...target, reasoning: false }, call().options);
    expect(up.requests.at(-1)!.body).toMatchObject({ reasoning: { extra: 1 }, include: ["web_search_call.action.sources"] });
  });

  it("an entry the gateway knows nothing of (no tags) gets the body as sent: OpenAI's own 400 for gpt-4.1 reaches the client", async () => {
    const err = await driver.responses!({ model: "x", input: "Hi", reasoning: { effort: "medium" } }, target, call().options).catch((e) => e);
    expect(err).toMatchObject({ status: 400, code: "INVALID_REQUEST", details: { field: "reasoning.effort", upstream_status: 400 } });
    expect(err.message).toContain("Unsupported parameter: 'reasoning.effort' is not supported with this model.");
  });

  it("the azure flavor has no responses op (its /responses is not under the deployment path): translated instead", () => {
    const az = createOpenAIDriver("az", { protocol: "openai", flavor: "azure", base_url: up.baseUrl, api_key: "k" }, { timeoutMs: 1000 });
    expect(az.responses).toBeUndefined();
    expect(driver.responses).toBeTypeOf("function");
    return az.close!();
  });
});

describe("buildResponsesRequest: call_ids OpenAI refuses (over 64 characters, another provider's replayed)", () => {
  const long = "functions.mcp__atlassian__confluence_create_page_with_attachments_v2:0";
  const body = { model: "m", input: [
    { type: "function_call", call_id: long, name: "f", arguments: "{}" },
    { type: "function_call_output", call_id: long, output: "ok" },
    { type: "function_call", call_id: "call_short", name: "f", arguments: "{}" },
  ] };
  const sent = (base_url?: string) => JSON.parse(buildResponsesRequest(body, target, { protocol: "openai", base_url, api_key: "k" }).body as string).input.map((it: any) => it.call_id);

  it("api.openai.com gets a 70-character call_id shortened to 64, the same in the call and its output; short ones as sent", () => {
    const [c, o, short] = sent();
    expect(long).toHaveLength(70);
    expect(c).toHaveLength(64);
    expect(o).toBe(c);
    expect(short).toBe("call_short");
  });

  it("another host gets them as sent", () => {
    expect(sent("http://127.0.0.1:9/v1")).toEqual([long, long, "call_short"]);
  });
});
