import { describe, expect, it } from "vitest";
import { worstCase, worstCasePico } from "./worst-case.ts";
import { picoToUsd } from "../../core/money/money.ts";
import { boundWebSearches } from "../../core/metering/server-tools.ts";

const worstCaseCost = (c: GatewayContext) => ({ toFixed: () => picoToUsd(worstCasePico(c)) });
import type { GatewayContext } from "../../core/pipeline/context.ts";

const model = (id: string, type: string, endpoints: { pricing: Record<string, string>; maxTokens?: number; contextWindow?: number }[]) =>
  [id, { id, type, config: {}, endpoints: endpoints.map((e) => ({ provider: "p", upstreamModel: id, ...e })) }] as const;

function ctx(endpoint: string, body: unknown, length?: number, raw: Record<string, unknown> = {}): GatewayContext {
  const models = new Map<string, any>([
    model("a/cheap", "language", [{ pricing: { input: "0.000001", output: "0.000002" }, maxTokens: 100, contextWindow: 1000 }, { pricing: { input: "0.000002", output: "0.000004" }, maxTokens: 100, contextWindow: 1000 }]),
    model("a/dear", "language", [{ pricing: { input: "0.00001", output: "0.00002", input_cache_write: "0.0000125" }, maxTokens: 50, contextWindow: 1000 }]),
    model("a/embed", "embedding", [{ pricing: { input: "0.0000001" }, contextWindow: 8000 }]),
    model("a/search", "language", [{ pricing: { input: "0.000001", output: "0.000002", web_search: "0.01" }, maxTokens: 100, contextWindow: 1000 }]),
    model("a/long", "language", [{ pricing: { input: "0.000001", output: "0.000002", web_search: "0.01", long_context: { above_input_tokens: 1000, input: "0.000003", output: "0.000004" } } as never, maxTokens: 100, contextWindow: 1000 }]),
    model("a/units", "reranking", [{ pricing: { search_unit: "0.002" }, contextWindow: 4096 }]),
    model("a/tokens", "reranking", [{ pricing: { input: "0.000001" } }]),
    [ "a/draw", { id: "a/draw", type: "image", config: { limits: { sizes: ["1024x1024", "1792x1024"], qualities: ["standard", "hd"] } }, endpoints: [{ provider: "p", upstreamModel: "draw", contextWindow: 4000,
      pricing: { image: "0.04", image_tiers: { standard: { "1024x1024": "0.04", "1792x1024": "0.08" }, hd: { "1024x1024": "0.08", "1792x1024": "0.12" } } } }] }],
    [ "a/paint", { id: "a/paint", type: "image", config: { limits: { sizes: ["1024x1024", "1536x1024"], qualities: ["medium", "high"] } }, endpoints: [{ provider: "p", upstreamModel: "paint", contextWindow: 4000,
      pricing: { image: "0.05", image_tiers: { medium: { "1024x1024": "0.05", "1536x1024": "0.07" }, high: { "1024x1024": "0.2", "1536x1024": "0.3" } } } }] }],
  ]);
  return { endpoint, body, headers: length ? { "content-length": String(length) } : {}, config: { models, raw } } as unknown as GatewayContext;
}

describe("worst-case cost", () => {
  it("max_tokens (or the model maximum) at the dearest endpoint, input bounded by the body size", () => {
    // 200 bytes in, 10 out: dearer endpoint 200 * 0.000002 + 10 * 0.000004
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 10 }, 200)).toFixed()).toBe("0.00044");
    // No max_tokens: the endpoint's maximum (100), times n.
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", n: 2 }, 200)).toFixed()).toBe("0.0012");
  });

  it("covers every fallback model, pricing input at the dearest cache-write price (a 1-hour write: 2x input unset)", () => {
    const c = worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 10, providerOptions: { gateway: { models: ["a/dear"] } } }, 200));
    expect(c.toFixed()).toBe("0.0042"); // 200 * 0.00002 + 10 * 0.00002
  });

  it("input is capped at the context window; embeddings reserve input only", () => {
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 1 }, 1_000_000)).toFixed()).toBe("0.002004");
    // One input: its bytes and a few tokens a model may add, at 0.0000001.
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: "x".repeat(96) }, 200)).toFixed()).toBe("0.00001");
  });

  it("an embeddings batch reserves each input up to the context window, summed: not one window for the whole batch", () => {
    // Three 10 000-byte inputs against an 8000-token window: 3 x 8000 tokens, where one window (8000) was reserved.
    const big = Array.from({ length: 3 }, () => "y".repeat(10_000));
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: big }, 30_100)).toFixed()).toBe("0.0024");
    // Bytes, not characters: a token is at least one byte (é is two).
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: ["é".repeat(48), "z".repeat(96)] }, 260)).toFixed()).toBe("0.00002");
    // Token ids: their count each (a flat list is one input).
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: [Array(96).fill(1), Array(196).fill(2)] }, 900)).toFixed()).toBe("0.00003");
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: Array(96).fill(1) }, 300)).toFixed()).toBe("0.00001");
    // A body that is no embeddings request (refused by the endpoint): its whole size, uncapped.
    expect(worstCaseCost(ctx("embeddings", { model: "a/embed", input: [1, "x"] }, 20_000)).toFixed()).toBe("0.002");
  });

  it("a rerank reserves one search unit whatever its documents and, priced per token, the query with every document", () => {
    const docs = (n: number, text = "doc") => Array.from({ length: n }, () => text);
    // One request is one billed query (the spec), however many or long its documents.
    expect(worstCaseCost(ctx("rerank", { model: "a/units", query: "q", documents: docs(100) }, 900)).toFixed()).toBe("0.002");
    expect(worstCaseCost(ctx("rerank", { model: "a/units", query: "q", documents: docs(250) }, 2000)).toFixed()).toBe("0.002");
    expect(worstCaseCost(ctx("rerank", { model: "a/units", query: "q", documents: docs(60, "d".repeat(5000)) }, 300_000)).toFixed()).toBe("0.002");
    // Per token: 10 x (1000-byte query + 12-byte document + 4), where the 1300-byte body was reserved.
    expect(worstCaseCost(ctx("rerank", { model: "a/tokens", query: "q".repeat(1000), documents: docs(10, "d".repeat(12)) }, 1300)).toFixed()).toBe("0.01016");
  });

  it("a Responses request continuing a stored conversation reserves input up to the context window", () => {
    // 1000 tokens of context at the dearer endpoint (0.000002) + 10 out (0.000004): the stored turns are not in the body.
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, previous_response_id: "resp_1", input: "Hi" }, 80)).toFixed()).toBe("0.00204");
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, input: [{ type: "item_reference", id: "msg_1" }] }, 80)).toFixed()).toBe("0.00204");
    // A conversation or a stored prompt the provider expands: the same worst case.
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, conversation: "conv_1", input: "Hi" }, 80)).toFixed()).toBe("0.00204");
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, conversation: { id: "conv_1" }, input: "Hi" }, 80)).toFixed()).toBe("0.00204");
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, prompt: { id: "pmpt_1", variables: { v: "x" } }, input: "Hi" }, 80)).toFixed()).toBe("0.00204");
    // A self-contained request is bounded by its size as on chat.
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, input: "Hi" }, 80)).toFixed()).toBe("0.0002");
  });

  it("a Responses request with an mcp tool reserves every model turn the loop may make (mcp.max_tool_rounds)", () => {
    // One turn: a context full of tool results (1000 tokens at 0.000002) + 10 out (0.000004) = 0.00204; three turns.
    const body = { model: "a/cheap", max_output_tokens: 10, input: "Hi", tools: [{ type: "mcp", server_label: "docs", require_approval: "never" }] };
    expect(worstCaseCost(ctx("responses", body, 80, { mcp: { max_tool_rounds: 3 } })).toFixed()).toBe("0.00612");
    // mcp.max_tool_rounds unset: 8 turns.
    expect(worstCaseCost(ctx("responses", body, 80)).toFixed()).toBe("0.01632");
    // What no output limit lowers grows the same way.
    expect(worstCase(ctx("responses", body, 80, { mcp: { max_tool_rounds: 3 } })).withoutOutputPico).toBe(3n * 1000n * 2_000_000n);
  });

  it("an mcp tool whose every call waits for approval reserves one model turn: the response ends at the approval request", () => {
    // One turn: 1000 tokens of context at 0.000002 + 10 out at 0.000004 = 0.00204.
    const cost = (tool: Record<string, unknown>, input: unknown = "Hi") =>
      worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, input, tools: [{ type: "mcp", server_label: "docs", ...tool }] }, 80)).toFixed();
    // require_approval absent (OpenAI's default), null, "always", or {always, never} with no tool never approved.
    for (const approval of [{}, { require_approval: null }, { require_approval: "always" }, { require_approval: { always: { tool_names: ["drop"] } } }, { require_approval: { never: { tool_names: [] } } }]) {
      expect(cost(approval), JSON.stringify(approval)).toBe("0.00204");
    }
    // A follow-up answering an approval runs the approved call, then one turn: nothing else can run unapproved.
    const answered = [{ type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: true }];
    expect(cost({}, answered)).toBe("0.00204");
    // The never-approved tool is not among allowed_tools: nothing runs unapproved either.
    expect(cost({ allowed_tools: ["fetch"], require_approval: { never: { tool_names: ["search"] } } })).toBe("0.00204");
    // A tool that can run unapproved lets the loop go on: every round (8 unset).
    expect(cost({ require_approval: { never: { tool_names: ["search"] } } })).toBe("0.01632");
    expect(cost({ allowed_tools: ["search"], require_approval: { never: { tool_names: ["search"] } } })).toBe("0.01632");
    expect(cost({ require_approval: "never" }, answered)).toBe("0.01632");
    // Listed under both: always wins, as the loop decides.
    expect(cost({ require_approval: { always: { tool_names: ["search"] }, never: { tool_names: ["search"] } } })).toBe("0.00204");
    // One tool that needs approval beside one that does not: the loop may go on.
    expect(worstCaseCost(ctx("responses", { model: "a/cheap", max_output_tokens: 10, input: "Hi", tools: [
      { type: "mcp", server_label: "a" }, { type: "mcp", server_label: "b", require_approval: "never" },
    ] }, 80)).toFixed()).toBe("0.01632");
  });

  it("media named by URL or file id (fetched and billed by the upstream) reserves input up to the context window", () => {
    // 1000 tokens of context at the dearer endpoint (0.000002) + 10 out (0.000004), however short the body.
    const user = (content: unknown) => [{ role: "user", content }];
    const cases: [string, unknown][] = [
      ["chat", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }]) }],
      ["chat", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "file", file: { file_id: "file-abc" } }]) }],
      ["messages", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "document", source: { type: "url", url: "https://example.com/a.pdf" } }]) }],
      ["responses", { model: "a/cheap", max_output_tokens: 10, input: [{ role: "user", content: [{ type: "input_image", file_id: "file-abc" }] }] }],
      ["responses", { model: "a/cheap", max_output_tokens: 10, input: [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/a.pdf" }] }] }],
      ["gemini", { model: "a/cheap", generationConfig: { maxOutputTokens: 10 }, contents: [{ role: "user", parts: [{ fileData: { fileUri: "gs://b/video.mp4" } }] }] }],
      ["gemini", { model: "a/cheap", generationConfig: { maxOutputTokens: 10 }, cachedContent: "cachedContents/abc", contents: [{ role: "user", parts: [{ text: "Hi" }] }] }],
    ];
    for (const [endpoint, body] of cases) expect(worstCaseCost(ctx(endpoint, body, 80)).toFixed(), `${endpoint} ${JSON.stringify(body)}`).toBe("0.00204");
  });

  it("inline media (billed by what it shows, not its size: a 1x1 PNG is 2833 tokens) reserves input up to the context window too", () => {
    const user = (content: unknown) => [{ role: "user", content }];
    const cases: [string, unknown][] = [
      ["chat", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } }]) }],
      ["chat", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]) }],
      ["chat", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } }]) }],
      ["messages", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] }]) }],
      ["messages", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }]) }],
      ["responses", { model: "a/cheap", max_output_tokens: 10, input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }] }] }],
      ["responses", { model: "a/cheap", max_output_tokens: 10, input: [{ role: "user", content: [{ type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" }] }] }],
      ["gemini", { model: "a/cheap", generationConfig: { maxOutputTokens: 10 }, contents: [{ role: "user", parts: [{ inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } }] }] }],
    ];
    for (const [endpoint, body] of cases) expect(worstCaseCost(ctx(endpoint, body, 80)).toFixed(), `${endpoint} ${JSON.stringify(body)}`).toBe("0.00204");
    // The same text without media: its body's size bounds it, as before.
    expect(worstCaseCost(ctx("chat", { model: "a/cheap", max_tokens: 10, messages: user([{ type: "text", text: "data:image/png;base64,AAAA" }]) }, 80)).toFixed()).toBe("0.0002");
  });

  it("chat web_search_options reserves the searches Claude is held to and a context full of results", () => {
    const c = ctx("chat", { model: "a/search", max_tokens: 10, messages: [{ role: "user", content: "news?" }], web_search_options: {} }, 80);
    // 11 model calls (the first and one for each search), each 1000 tokens in at 0.000001, 10 out at 0.000002 for the
    // whole response (max_tokens bounds all its passes together), and 10 searches at 0.01.
    expect(picoToUsd(worstCasePico(c, boundWebSearches(c.body, "chat")))).toBe("0.11102");
  });

  it("Gemini built-in tools (googleSearch, urlContext) reserve input up to the context window: their results are billed as input", () => {
    const body = (tools: unknown) => ({ model: "a/cheap", generationConfig: { maxOutputTokens: 10 }, contents: [{ role: "user", parts: [{ text: "Hi" }] }], tools });
    // No limit of their own: the gateway's 10 rounds, 11 model calls of 1000 in at 0.000002, and 10 out at 0.000004
    // once (maxOutputTokens bounds the response whole).
    expect(worstCaseCost(ctx("gemini", body([{ googleSearch: {} }]), 80)).toFixed()).toBe("0.02204");
    expect(worstCaseCost(ctx("gemini", body([{ urlContext: {} }]), 80)).toFixed()).toBe("0.02204");
    expect(worstCaseCost(ctx("gemini", body([{ functionDeclarations: [{ name: "f" }] }]), 80)).toFixed()).toBe("0.0002");
  });

  it("server tools reserve one model call for each of their calls the request allows, as the usage ceiling bills", () => {
    // Each call: 1000 tokens of context at 0.000001 (10^9 pico); the response's 10 out at 0.000002 (2 * 10^7 pico)
    // once, max_tokens bounding all its passes together; each search 0.01.
    const OUT = 20_000_000n;
    const ask = (extra: Record<string, unknown>) => ({ model: "a/search", max_tokens: 10, messages: [{ role: "user", content: "news?" }], ...extra });
    const reserved = (endpoint: string, body: any, raw?: Record<string, unknown>) => {
      const c = ctx(endpoint, body, 80, raw);
      return worstCase(c, endpoint === "gemini" ? 0 : boundWebSearches(c.body, endpoint as "messages"));
    };
    const search = (max_uses?: number) => ({ type: "web_search_20250305", name: "web_search", ...(max_uses === undefined ? {} : { max_uses }) });
    // max_uses 2: the first call and one per search, 3 calls, and 2 searches.
    expect(reserved("messages", ask({ tools: [search(2)] }))).toMatchObject({ pico: 3n * 1_000_000_000n + OUT + 2n * 10_000_000_000n, modelCalls: 3, limitField: "max_uses" });
    // None: sent with 10 (budgeted), 11 calls and 10 searches.
    expect(reserved("messages", ask({ tools: [search()] }))).toMatchObject({ pico: 11n * 1_000_000_000n + OUT + 10n * 10_000_000_000n, modelCalls: 11 });
    // Two limited tools add up; max_uses 0 runs none: one call.
    expect(reserved("messages", ask({ tools: [search(2), { type: "web_fetch_20250910", name: "web_fetch", max_uses: 3 }] })).modelCalls).toBe(6);
    expect(reserved("messages", ask({ tools: [search(0)] })).modelCalls).toBeUndefined();
    // Claude's MCP connector and code execution take no limit: the gateway's 10 rounds, or mcp.max_tool_rounds when larger.
    const connector = ask({ mcp_servers: [{ type: "url", url: "https://example.com/mcp", name: "docs" }], tools: [search(2)] });
    expect(reserved("messages", connector)).toMatchObject({ modelCalls: 11 });
    expect(reserved("messages", connector).limitField).toBeUndefined();
    expect(reserved("messages", connector, { mcp: { max_tool_rounds: 20 } }).modelCalls).toBe(21);
    expect(reserved("messages", ask({ tools: [{ type: "code_execution_20250825", name: "code_execution" }] })).modelCalls).toBe(11);
    // Responses: max_tool_calls bounds every built-in tool's calls.
    const responses = (extra: Record<string, unknown>) => ({ model: "a/search", max_output_tokens: 10, input: "news?", ...extra });
    expect(reserved("responses", responses({ tools: [{ type: "code_interpreter" }], max_tool_calls: 1 }))).toMatchObject({ pico: 2n * 1_000_000_000n + OUT, modelCalls: 2, limitField: "max_tool_calls" });
    expect(reserved("responses", responses({ tools: [{ type: "web_search" }] }))).toMatchObject({ modelCalls: 11, webSearches: 10 });
  });

  it("server tools' calls are billed as one usage: held at the long-prompt tier their input together may reach", () => {
    // One search: 2 calls of 1000 tokens, 2000 together, over the tier's 1000: each at 0.000003 in, the response's 10
    // out at 0.000004 once, and the search at 0.01. (One call's 1000 tokens alone would have stayed at the base prices.)
    const c = ctx("messages", { model: "a/long", max_tokens: 10, messages: [{ role: "user", content: "news?" }], tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 1 }] }, 80);
    expect(picoToUsd(worstCasePico(c, boundWebSearches(c.body, "messages")))).toBe("0.01604");
  });

  it("an mcp tool an upstream may run itself (server_url) reserves the more of the gateway's turns and the native loop's calls", () => {
    const body = (extra: Record<string, unknown>) => ({ model: "a/cheap", max_output_tokens: 10, input: "Hi", tools: [{ type: "mcp", server_label: "docs", server_url: "https://example.com/mcp", require_approval: "never" }], ...extra });
    // 8 gateway turns (each an upstream call asking for 10 out), or one call with 10 rounds of the tool (11 passes
    // over the input, 10 out for the whole response): 11 calls' input at 0.002 and 8 turns' output at 0.00004.
    expect(worstCase(ctx("responses", body({}), 80))).toMatchObject({ pico: 11n * 2_000_000_000n + 8n * 40_000_000n, modelTurns: 8, modelCalls: 11 });
    // max_tool_calls 3: 4 native calls, fewer than the 8 turns.
    expect(worstCase(ctx("responses", body({ max_tool_calls: 3 }), 80))).toMatchObject({ pico: 8n * 2_040_000_000n, modelTurns: 8 });
  });

  it("an mcp tool whose every call waits for approval reserves one model call: the upstream stops at the first request", () => {
    const body = (require_approval: unknown, extra: Record<string, unknown> = {}) => ({ model: "a/cheap", max_output_tokens: 10, input: "Hi", tools: [{ type: "mcp", server_label: "docs", server_url: "https://example.com/mcp", require_approval, ...extra }] });
    // One call: 1000 in at 0.000002 + 10 out at 0.000004.
    for (const approval of ["always", undefined, { always: { tool_names: ["search"] } }, { never: { tool_names: [] } }]) {
      const w = worstCase(ctx("responses", body(approval), 80));
      expect(w.pico, JSON.stringify(approval)).toBe(2_040_000_000n);
      expect(w.modelCalls).toBeUndefined();
    }
    // A tool it lets run unapproved may loop: the allowed one here.
    expect(worstCase(ctx("responses", body({ never: { tool_names: ["search"] } }, { allowed_tools: ["search"] }), 80)).modelCalls).toBe(11);
    // Beside a web search, the search's calls still count.
    const both = { ...body("always"), tools: [...body("always").tools, { type: "web_search" }], max_tool_calls: 2 };
    expect(worstCase(ctx("responses", both, 80))).toMatchObject({ modelCalls: 3 });
  });

  it("images reserve n x the price of the tier they will be sent at: the one named, else the default; none served, nothing", () => {
    expect(worstCaseCost(ctx("images", { model: "a/draw", prompt: "x", n: 2, quality: "hd", size: "1792x1024" })).toFixed()).toBe("0.24");
    expect(worstCaseCost(ctx("images", { model: "a/draw", prompt: "x", n: 2, size: "1792x1024" })).toFixed()).toBe("0.16");
    expect(worstCaseCost(ctx("images", { model: "a/draw", prompt: "x" })).toFixed()).toBe("0.04");
    // refused by the images endpoint (400 naming quality) before any upstream call: nothing held, so no 402 comes first
    expect(worstCaseCost(ctx("images", { model: "a/draw", prompt: "x", quality: "ultra" })).toFixed()).toBe("0");
  });

  it("an image fallback chain reserves the dearest of each model's own tier, leaving out a model that cannot serve it", () => {
    const chain = (first: string, then: string, extra: Record<string, unknown> = {}) => ctx("images", { model: first, prompt: "x", ...extra, providerOptions: { gateway: { models: [then] } } });
    // nothing named: a/draw standard 1024 ($0.04), a/paint medium 1024 ($0.05)
    expect(worstCaseCost(chain("a/draw", "a/paint")).toFixed()).toBe("0.05");
    expect(worstCaseCost(chain("a/paint", "a/draw")).toFixed()).toBe("0.05");
    // hd is a/draw's own hd ($0.08) and a/paint's high ($0.2), the tier it is sent as there; high only a/paint offers
    expect(worstCaseCost(chain("a/paint", "a/draw", { quality: "hd", n: 2 })).toFixed()).toBe("0.4");
    // auto is each model's default, as nothing named
    expect(worstCaseCost(chain("a/draw", "a/paint", { quality: "auto", size: "auto" })).toFixed()).toBe("0.05");
    expect(worstCaseCost(chain("a/draw", "a/paint", { quality: "high", size: "1536x1024" })).toFixed()).toBe("0.3");
    // no model serves it (the 400 naming quality, before any upstream call): nothing held
    expect(worstCaseCost(chain("a/draw", "a/paint", { quality: "ultra" })).toFixed()).toBe("0");
  });

  it("a generation's worst case without output (what no output limit lowers) is kept apart, at the endpoint where it is dearest", () => {
    // Input up to the context window at the dearer a/cheap endpoint: 1000 x 0.000002; the 10 output tokens are not in it.
    const continued = worstCase(ctx("responses", { model: "a/cheap", max_output_tokens: 10, previous_response_id: "resp_1", input: "Hi" }, 80));
    expect([picoToUsd(continued.pico), picoToUsd(continued.withoutOutputPico!)]).toEqual(["0.00204", "0.002"]);
    // With a/dear as fallback: its 200 bytes of input at 0.00002 (a 1-hour cache write) is the dearest input.
    const chain = worstCase(ctx("chat", { model: "a/cheap", max_tokens: 10, providerOptions: { gateway: { models: ["a/dear"] } } }, 200));
    expect([picoToUsd(chain.pico), picoToUsd(chain.withoutOutputPico!)]).toEqual(["0.0042", "0.004"]);
    // Web searches are not output either: 11 calls of 1000 in at 0.000001 + 10 searches at 0.01.
    const c = ctx("chat", { model: "a/search", max_tokens: 10, messages: [{ role: "user", content: "news?" }], web_search_options: {} }, 80);
    expect(worstCase(c, boundWebSearches(c.body, "chat"))).toMatchObject({ withoutOutputPico: 111_000_000_000n, webSearches: 10, modelCalls: 11 });
    // Media operations have no output limit to lower.
    expect(worstCase(ctx("embeddings", { model: "a/embed", input: "x" }, 100)).withoutOutputPico).toBeUndefined();
  });
});
