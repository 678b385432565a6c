// POST /v1/responses passed through to an upstream that serves the Responses API itself (catalog native_responses),
// on the shipped gateway (gateway.yaml: SQLite store, full default pipeline, default catalog) with the official
// openai client: create, stream + finalResponse, built-in tools (passed through; on a translated model dropped and
// named, or a 400 when tool_choice forces one), fields only the upstream knows, upstream errors, fallback from a native to a translated model,
// usage in the ledger. The OpenAI fake serves /responses faithfully (test/upstreams/openai-responses.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { randomUUID } from "node:crypto";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, shippedConfig } from "./helpers/shipped-config.ts";
import { RESPONSES_TEXT, startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { defaultPipeline } from "../plugins/index.ts";
import { readResponseStream } from "./helpers/responses-fixtures.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const NATIVE = "openai/gpt-4o-mini";
const NATIVE_REASONER = "openai/gpt-5-mini";
const CLAUDE = "anthropic/claude-sonnet-4.5";
const SANDBOX = testKey("rsp-native", true);
const CLAUDE_TEXT = /Hello from the fake Anthropic upstream/;

let up: FakeOpenAIWithResponses;
let claude: FakeAnthropic;
let gw: TestGateway;
let client: OpenAI;

/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  [up, claude] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic()]);
  const config = shippedConfig({ openai: up.baseUrl, anthropic: claude.baseUrl });
  config.projects["rsp-native-sandbox"] = { keys: [keyEntry("sandbox", SANDBOX)] };
  // Every provider's key variable blank (= off, whatever the machine's environment holds) but the fakes'.
  const env: Record<string, string> = {};
  for (const p of Object.values(config.providers) as { api_key?: string }[]) {
    for (const m of String(p.api_key ?? "").matchAll(/\$\{(\w+)/g)) env[m[1]!] = "";
  }
  Object.assign(env, { OPENAI_API_KEY: "sk-fake-upstream", ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY });
  gw = await startTestGateway(config, { env });
  client = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([up?.close(), claude?.close()]);
});

const ledgerOf = async (requestId: string) =>
  (await gw.gateway.store.ledger({ project: SHIPPED_PROJECT })).filter((e) => e.requestId === requestId);
const rid = () => `native-${randomUUID()}`;
/** The gateway's own routing options, which the openai client's types do not know. */
const fallbackTo = (model: string) => ({ providerOptions: { gateway: { models: [model] } } }) as object;
const auth = { authorization: `Bearer ${SHIPPED_KEY}` };

describe("native passthrough on the shipped gateway", () => {
  it("the catalog flags OpenAI's own models native, not the others", () => {
    const models = gw.gateway.config.models;
    expect(models.get(NATIVE)!.endpoints[0]).toMatchObject({ provider: "openai", nativeResponses: true });
    expect(models.get("openai/gpt-5")!.endpoints[0]!.nativeResponses).toBe(true);
    expect(models.get(CLAUDE)!.endpoints[0]!.nativeResponses).toBeFalsy();
  });

  it("responses.create: the upstream's own response object, the body sent as is with its model id, usage in the ledger", async () => {
    up.responses.cachedTokens = 4;
    const id = rid();
    const { data: r, response } = await client.responses
      .create({ model: NATIVE, instructions: "Be brief.", input: "Hi", max_output_tokens: 200 }, { headers: { "x-request-id": id } })
      .withResponse();
    up.responses.cachedTokens = 0;
    const sent = up.requests.at(-1)!;
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body).toEqual({ model: "gpt-4o-mini", instructions: "Be brief.", input: "Hi", max_output_tokens: 200 });
    expect(response.headers.get("x-mg-resolved-provider")).toBe("openai");
    expect(r.object).toBe("response");
    expect(up.responses.stored.has(r.id)).toBe(true); // the upstream's id, not one the gateway made up
    expect(r.output_text).toBe(RESPONSES_TEXT);
    expect(r.usage!.input_tokens_details.cached_tokens).toBe(4);
    const rows = await ledgerOf(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      endpoint: "responses", model: NATIVE, provider: "openai", status: 200,
      inputTokens: r.usage!.input_tokens - 4, cacheReadTokens: 4, outputTokens: r.usage!.output_tokens,
    });
    expect(Number(rows[0]!.costUsd)).toBeGreaterThan(0);
  });

  it("responses.stream: the upstream's events relayed in order with their names, finalResponse(), usage in the ledger", async () => {
    const id = rid();
    const stream = client.responses.stream(
      // A model that reasons: GPT-4o mini refuses reasoning and its encrypted content (non-reasoning-effort.e2e).
      { model: NATIVE_REASONER, input: "Hi", reasoning: { effort: "low", summary: "auto" }, include: ["reasoning.encrypted_content"], store: false },
      { headers: { "x-request-id": id } },
    );
    const { types, seqs, deltas, final } = await readResponseStream(stream);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(types).toContain("response.reasoning_summary_text.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(deltas).toBe(RESPONSES_TEXT);
    expect(final.output_text).toBe(RESPONSES_TEXT);
    const reasoning = final.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.type).toBe("reasoning");
    expect(reasoning.encrypted_content).toEqual(expect.any(String)); // `include` reached the upstream
    expect(up.responses.stored.has(final.id)).toBe(false); // so did store: false
    const rows = await ledgerOf(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      endpoint: "responses", inputTokens: final.usage!.input_tokens, outputTokens: final.usage!.output_tokens,
      reasoningTokens: final.usage!.output_tokens_details.reasoning_tokens,
    });
    expect(rows[0]!.reasoningTokens).toBeGreaterThan(0);
    expect(rows[0]!.ttftMs).toEqual(expect.any(Number));
  });

  it.each([false, true])("a built-in tool (web_search) passes through unchanged to the native upstream (stream=%s)", async (streamed) => {
    const body = { model: NATIVE, input: "Latest news on the gateway?", tools: [{ type: "web_search" as const, search_context_size: "low" as const }] };
    const r = streamed ? await client.responses.stream(body).finalResponse() : await client.responses.create(body);
    expect(up.requests.at(-1)!.body.tools).toEqual([{ type: "web_search", search_context_size: "low" }]);
    expect(r.output.map((o) => o.type)).toEqual(["web_search_call", "message"]);
    expect(r.output[0]).toMatchObject({ type: "web_search_call", status: "completed", action: { type: "search", query: "Latest news on the gateway?" } });
    expect(r.output_text).toContain("searched the web");
  });

  it("built-in tool output items sent back in input reach the native upstream, and are dropped on a translated model; tool_choice may name a built-in tool", async () => {
    const first = await client.responses.create({ model: NATIVE, input: "News?", tools: [{ type: "web_search" }], tool_choice: { type: "web_search_preview" }, store: false });
    expect(up.requests.at(-1)!.body.tool_choice).toEqual({ type: "web_search_preview" });
    expect(first.output[0]!.type).toBe("web_search_call");
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "News?" }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: "user", content: "And more?" }];
    const again = await client.responses.create({ model: NATIVE, input, tools: [{ type: "web_search" }], store: false });
    expect(again.status).toBe("completed");
    expect(up.requests.at(-1)!.body.input.map((i: { type?: string }) => i.type ?? "message")).toEqual(["message", "web_search_call", "message", "message"]);
    const { data: translated, response } = await client.responses.create({ model: CLAUDE, input }).withResponse();
    expect(translated.output_text).toMatch(CLAUDE_TEXT);
    expect(response.headers.get("x-mg-dropped-params")).toContain("input[1].type=web_search_call");
    expect(JSON.stringify(claude.requests.at(-1)!.body)).not.toContain("web_search");
  });

  it("a built-in tool a translated model (Anthropic) or the sandbox cannot run is dropped and named; forcing it is a 400 naming tool_choice, before any upstream call", async () => {
    const tools = [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }, { type: "code_interpreter", container: { type: "auto" } }];
    const { data, response } = await client.responses.create({ model: CLAUDE, input: "Hi", tools } as OpenAI.Responses.ResponseCreateParamsNonStreaming).withResponse();
    expect(data.status).toBe("completed");
    expect(response.headers.get("x-mg-dropped-params")).toContain("tools[1].type=code_interpreter");
    expect(claude.requests.at(-1)!.body.tools.map((t: { name: string }) => t.name)).toEqual(["f"]);
    const before = claude.requests.length;
    const err = await client.responses.create({ model: CLAUDE, input: "Hi", tools, tool_choice: { type: "code_interpreter" } } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ code: "INVALID_REQUEST", param: "tool_choice.type" });
    expect(err.error.message).toContain("code_interpreter");
    expect(claude.requests.length).toBe(before);
    const sandbox = await postJson(`${gw.baseURL}/responses`, { model: NATIVE, input: "Hi", tools: [{ type: "web_search" }] }, { authorization: `Bearer ${SANDBOX}` });
    expect(sandbox.status).toBe(200);
    expect(sandbox.headers.get("x-mg-dropped-params")).toContain("tools[0].type=web_search");
  });

  it("a forced built-in tool with a translated primary and a native fallback model is served by the native one", async () => {
    const before = claude.requests.length;
    const r = await client.responses.create({ model: CLAUDE, input: "News?", tools: [{ type: "web_search_preview" }], tool_choice: { type: "web_search_preview" }, ...fallbackTo(NATIVE) });
    expect(r.output[0]!.type).toBe("web_search_call");
    expect(claude.requests.length).toBe(before);
  });

  it("fields only the upstream knows reach it (and are dropped on a translated model); an unknown one is the upstream's 400, as INVALID_REQUEST with its message", async () => {
    const extra = { truncation: "auto", prompt_cache_key: "tenant-7", safety_identifier: "user-42", service_tier: "flex", top_logprobs: 2 } as const;
    const r = await client.responses.create({ model: NATIVE, input: "Hi", ...extra });
    expect(up.requests.at(-1)!.body).toMatchObject(extra);
    expect(r).toMatchObject({ truncation: "auto", prompt_cache_key: "tenant-7", service_tier: "flex" });
    await client.responses.create({ model: CLAUDE, input: "Hi", ...extra });
    // (safety_identifier is translated: Anthropic's metadata.user_id.)
    expect(JSON.stringify(claude.requests.at(-1)!.body)).not.toMatch(/tenant-7|flex|truncation|top_logprobs/);

    const bad = await postJson(`${gw.baseURL}/responses`, { model: NATIVE, input: "Hi", frobnicate: true }, auth);
    expect(up.requests.at(-1)!.body.frobnicate).toBe(true);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "INVALID_REQUEST", param: "frobnicate" });
    expect(bad.json.error.message).toContain("Unknown parameter: 'frobnicate'.");
    const err = await client.responses.create({ model: NATIVE, input: [{ type: "function_call_output", call_id: "call_nowhere", output: "21C" }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ code: "INVALID_REQUEST", param: "input" });
    expect(err.error.message).toContain("No tool call found for function call output with call_id call_nowhere.");
  });

  it("the native upstream's connection dropping mid-stream ends as a translated stream does: response.failed, then the error event the openai client throws", async () => {
    up.failures.push({ kind: "die-mid-stream", afterChunks: 4 });
    const events: Array<{ type: string; sequence_number: number; response?: any }> = [];
    const err = await (async () => {
      for await (const e of client.responses.stream({ model: NATIVE, input: "Hi" })) events.push(e as never);
    })().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.error).toMatchObject({ code: "UPSTREAM_ERROR", message: expect.any(String) });
    const types = events.map((e) => e.type);
    expect(types).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.failed"]);
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4]);
    expect(events.at(-1)!.response).toMatchObject({ status: "failed", model: NATIVE, error: { code: "server_error", message: err.error.message } });
    expect(events.at(-1)!.response.output).toEqual([expect.objectContaining({ type: "message", status: "incomplete" })]);

    // On the wire: the error event's sequence_number follows response.failed's.
    up.failures.push({ kind: "die-mid-stream", afterChunks: 4 });
    const res = await fetch(`${gw.baseURL}/responses`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ model: NATIVE, input: "Hi", stream: true }) });
    const frames = (await res.text()).split("\n\n").filter(Boolean).map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: "))!.slice(6)));
    expect(frames.slice(-2).map((d) => [d.type, d.sequence_number])).toEqual([["response.failed", 4], ["error", 5]]);
  });

  it.each([false, true])("an upstream 429 falls back to the translated model (stream=%s)", async (streamed) => {
    up.failures.push({ kind: "status", status: 429 });
    const before = up.requests.length;
    const body = { model: NATIVE, input: "Hi", ...fallbackTo(CLAUDE) };
    const { data, response } = streamed
      ? await (async () => {
        const { data: s, response: res } = await client.responses.create({ ...body, stream: true }).withResponse();
        const types: string[] = [];
        let final: OpenAI.Responses.Response | undefined;
        for await (const e of s) {
          types.push(e.type);
          if (e.type === "response.completed") final = e.response;
        }
        expect(types[0]).toBe("response.created");
        return { data: final!, response: res };
      })()
      : await client.responses.create(body).withResponse();
    expect(up.requests.length).toBe(before + 1);
    expect(up.requests.at(-1)!.path).toBe("/v1/responses");
    expect(response.headers.get("x-mg-resolved-provider")).toBe("anthropic");
    expect(data.status).toBe("completed");
    expect(data.output_text ?? (data.output[0] as OpenAI.Responses.ResponseOutputMessage).content.map((c) => (c as { text: string }).text).join("")).toMatch(CLAUDE_TEXT);
  });

  it("a forced built-in tool request whose native primary fails over to a translated fallback gets the upstream failure, not a crash", async () => {
    up.failures.push({ kind: "status", status: 429 }, { kind: "status", status: 429 }, { kind: "status", status: 429 });
    const before = claude.requests.length;
    const res = await postJson(`${gw.baseURL}/responses`, { model: NATIVE, input: "Hi", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" }, providerOptions: { gateway: { models: [CLAUDE] } } }, auth);
    up.failures.length = 0;
    expect(res.status).toBe(502);
    expect(res.json.error.code).toBe("UPSTREAM_ERROR");
    expect(res.json.error.message).toContain("429");
    expect(claude.requests.length).toBe(before); // passed over: nothing was sent without its tool
  });
});

describe("a pipeline without stream-transcoder", () => {
  it("still passes /responses through to a native endpoint; a translated one has no provider", async () => {
    const key = testKey("rsp-native-bare");
    const bare = await startTestGateway({
      providers: { up: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
      models: {
        "openai/native": { endpoints: [{ provider: "up", model: "gpt-4.1", native_responses: true }] },
        "openai/translated": { endpoints: [{ provider: "up", model: "gpt-4.1" }] },
      },
      projects: { acme: { keys: [keyEntry("ci", key)] } },
      pipeline: defaultPipeline().filter((n) => n !== "stream-transcoder"),
    });
    try {
      const h = { authorization: `Bearer ${key}` };
      const ok = await postJson(`${bare.baseURL}/responses`, { model: "openai/native", input: "Hi", tools: [{ type: "web_search" }] }, h);
      expect(ok.status).toBe(200);
      expect(up.requests.at(-1)!.body).toEqual({ model: "gpt-4.1", input: "Hi", tools: [{ type: "web_search" }] });
      const before = up.requests.length;
      const no = await postJson(`${bare.baseURL}/responses`, { model: "openai/translated", input: "Hi" }, h);
      expect(no.status).toBe(400);
      expect(no.text).toContain("does not support responses requests");
      expect(up.requests.length).toBe(before);
    } finally {
      await bare.close();
    }
  });
});
