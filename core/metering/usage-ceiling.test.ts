import { describe, expect, it } from "vitest";
import { maxModelCalls, usageCeiling } from "./usage-ceiling.ts";
import { boundWebSearches } from "./server-tools.ts";

const target = { provider: "up", modelId: "m/x", upstreamModel: "x", contextWindow: 1000, maxTokens: 100, protocol: "openai" };
const ctx = (endpoint: string, body: unknown, mcp?: Record<string, unknown>) => ({
  endpoint, protocol: endpoint === "messages" ? "anthropic" : "openai", body, targets: [target],
  attempts: [{ provider: "up", model: "m/x", status: 200, latencyMs: 1 }], config: { raw: { mcp } },
}) as never;

describe("usageCeiling", () => {
  it("one call's worth for a plain request: the context window in, what was asked for out", () => {
    expect(usageCeiling(ctx("chat", { model: "m/x", max_tokens: 50, messages: [] }))).toEqual({ input: 1000, output: 50 });
  });

  it("several calls' worth of input when the request enables tools that loop inside it (their usage adds up)", () => {
    // Anthropic web search with max_uses 3 (Anthropic stops it there): the first pass and one per search, each
    // re-reading the context; the 50 output tokens asked bound the whole response, all passes together.
    const search = { model: "m/x", max_tokens: 50, messages: [], tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }] };
    expect(usageCeiling(ctx("messages", search))).toEqual({ input: 4000, output: 50 });
    // Without one (an unbudgeted request, sent as it came): the gateway's 10 rounds, plus the first.
    const open = { ...search, tools: [{ type: "web_search_20250305", name: "web_search" }] };
    expect(usageCeiling(ctx("messages", open))).toEqual({ input: 11_000, output: 50 });
    // Claude's MCP connector loops over its servers' tools within the call, as search does.
    const connector = { model: "m/x", max_tokens: 50, messages: [], mcp_servers: [{ type: "url", url: "https://example.com/mcp", name: "docs" }] };
    expect(usageCeiling(ctx("messages", connector))).toEqual({ input: 11_000, output: 50 });
    // A Responses mcp tool a native upstream runs, that may run a call unapproved, with mcp.max_tool_rounds 20: 21
    // passes in one response.
    const mcp = { model: "m/x", max_output_tokens: 50, input: "hi", tools: [{ type: "mcp", server_label: "docs", require_approval: "never" }] };
    expect(usageCeiling(ctx("responses", mcp, { max_tool_rounds: 20 }))).toEqual({ input: 21_000, output: 50 });
  });

  it("is what the budget reserved for: the same model calls, the request's own limit where it states one", () => {
    const q = { model: "m/x", max_tokens: 50, messages: [] };
    const r = { model: "m/x", max_output_tokens: 50, input: "hi" };
    const docs = [{ type: "url", url: "https://example.com/mcp", name: "docs" }];
    const cases: [string, any, number][] = [
      ["messages", { ...q, tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }] }, 3],
      ["messages", { ...q, tools: [{ type: "web_search_20250305", name: "web_search" }] }, 11], // sent with max_uses 10
      ["messages", { ...q, mcp_servers: docs, tools: [{ type: "mcp_toolset", mcp_server_name: "docs" }] }, 11],
      ["responses", { ...r, tools: [{ type: "web_search" }], max_tool_calls: 4 }, 5],
      ["responses", { ...r, tools: [{ type: "file_search", vector_store_ids: ["vs"] }] }, 11],
      // An mcp tool whose every call waits for approval: the upstream stops at the first request, one pass.
      ["responses", { ...r, tools: [{ type: "mcp", server_label: "d", server_url: "https://example.com/mcp", require_approval: "always" }] }, 1],
      ["chat", { ...q, web_search_options: {} }, 11],
      ["gemini", { model: "m/x", contents: [], tools: [{ googleSearch: {} }] }, 11],
      ["chat", { ...q, tools: [{ type: "function", function: { name: "f" } }] }, 1],
    ];
    for (const [endpoint, body, calls] of cases) {
      const c = ctx(endpoint, body);
      // The budget ran first: it bounds an open web search before the request is sent.
      if (endpoint !== "gemini") boundWebSearches(body, endpoint as "messages");
      expect(maxModelCalls(c).calls, `${endpoint} ${JSON.stringify(body)}`).toBe(calls);
      expect(usageCeiling(c).input, `${endpoint} ${JSON.stringify(body)}`).toBe(1000 * calls);
      // The output limit bounds the response whole: what was asked (Gemini's none: the model's 100), once.
      expect(usageCeiling(c).output, `${endpoint} ${JSON.stringify(body)}`).toBe(endpoint === "gemini" ? 100 : 50);
    }
  });

  it("a limit that is not a whole number of calls (a body no schema checked) is read as none: the ceiling stays finite", () => {
    const r = { model: "m/x", max_output_tokens: 50, input: "hi", tools: [{ type: "web_search" }] };
    for (const max_tool_calls of [1e300, 1.5, -1]) {
      expect(usageCeiling(ctx("responses", { ...r, max_tool_calls }))).toEqual({ input: 11_000, output: 50 });
    }
    const search = { model: "m/x", max_tokens: 50, messages: [], tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 1e300 }] };
    expect(usageCeiling(ctx("messages", search))).toEqual({ input: 11_000, output: 50 });
  });

  it("the mcp loop's turns: each turn's worth, once the loop has made the body's mcp tools functions", () => {
    // Three turns each under the 1000-token window, 25 output tokens asked each: the record sums them.
    const rewritten = { model: "m/x", max_output_tokens: 25, input: [], tools: [{ type: "function", name: "docs__search", parameters: {} }] };
    expect(usageCeiling({ ...(ctx("responses", rewritten) as object), modelTurns: 3 } as never)).toEqual({ input: 3000, output: 75 });
    // With a web search (max_tool_calls 2) beside: each turn re-reads its context 3 times, and asks for 25 once.
    const searching = { ...rewritten, max_tool_calls: 2, tools: [...rewritten.tools, { type: "web_search" }] };
    expect(usageCeiling({ ...(ctx("responses", searching) as object), modelTurns: 3 } as never)).toEqual({ input: 9000, output: 75 });
  });

  it("an embeddings batch: each input up to the context window, summed, as the budget reserved (not one window)", () => {
    // Two 10-byte inputs and a few tokens each a model may add; three 5000-byte ones, 1000 each.
    expect(usageCeiling(ctx("embeddings", { model: "m/x", input: ["a".repeat(10), "b".repeat(10)] }))).toEqual({ input: 28 });
    expect(usageCeiling(ctx("embeddings", { model: "m/x", input: Array(3).fill("c".repeat(5000)) }))).toEqual({ input: 3000 });
  });

  it("a rerank: the query with every document in; no search-unit ceiling (one query is one unit)", () => {
    const docs = Array.from({ length: 250 }, () => "d".repeat(20));
    expect(usageCeiling(ctx("rerank", { model: "m/x", query: "q".repeat(10), documents: docs }))).toEqual({ input: 250 * 34 });
  });

  it("a 200k window with a 1M long context (Claude Sonnet): 1M only where the upstream call carries the beta, as its driver says", () => {
    const sonnet = { ...target, contextWindow: 200_000, maxTokens: 64_000, pricing: { input: "0.000003", long_context: { above_input_tokens: 200_000, input: "0.000006", context_window: 1_000_000 } } };
    const send = async () => ({});
    // An Anthropic-protocol driver: the beta its call carries is the client's header, the body's anthropic_beta
    // (Bedrock's InvokeModel), or its configured headers'; it is handed the client's body and headers only natively.
    const anthropic = (configured?: string) => ({
      name: "up", protocol: "anthropic", messages: send,
      opensLongContext: (_t: unknown, sent: { body?: any; clientHeaders: Record<string, unknown> }) =>
        [configured, sent.clientHeaders["anthropic-beta"], sent.body?.anthropic_beta].flat().some((b) => typeof b === "string" && b.startsWith("context-1m-")),
    });
    const at = (endpoint: string, headers: Record<string, string>, driver: unknown = anthropic(), body: object = {}) =>
      usageCeiling({ ...(ctx(endpoint, { model: "m/x", max_tokens: 50, messages: [], ...body }) as object), targets: [sonnet], headers, drivers: new Map([["up", driver]]) } as never).input;
    const beta = { "anthropic-beta": "context-1m-2025-08-07" };
    expect(at("messages", {})).toBe(200_000);
    expect(at("messages", beta)).toBe(1_000_000);
    // The beta in the body, no header (Bedrock's InvokeModel sends it so): the upstream serves 1M.
    expect(at("messages", {}, anthropic(), { anthropic_beta: ["context-1m-2025-08-07"] })).toBe(1_000_000);
    // The provider's configured anthropic-beta goes on every call, a chat client's translated one too.
    expect(at("chat", {}, anthropic("context-1m-2025-08-07"))).toBe(1_000_000);
    expect(at("messages", {}, anthropic("context-1m-2025-08-07"))).toBe(1_000_000);
    // A chat client's header or body field is not forwarded (a translated body), nor a Messages one to an OpenAI host.
    expect(at("chat", beta)).toBe(200_000);
    expect(at("chat", {}, anthropic(), { anthropic_beta: ["context-1m-2025-08-07"] })).toBe(200_000);
    expect(at("messages", beta, { name: "up", protocol: "openai", chat: send })).toBe(200_000);
  });

  it("no ceiling for other media (images, videos): only the sanity cap applies", () => {
    expect(usageCeiling(ctx("images", { model: "m/x", prompt: "a cat" }))).toEqual({});
  });
});
