import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { translators } from "../index.ts";
import { flatName } from "./tools.ts";

const target: Target = { modelId: "x/model", provider: "up", upstreamModel: "model", pricing: {} };
const opts = (driverProtocol: string) => ({ cacheMarkers: false, cacheAuto: false, driverProtocol, provider: "up" });
const params = { type: "object", properties: { cmd: { type: "string" } } };

/** What Codex sends: its own function tools, an MCP server's tools as a namespace, and web search. */
const codexTools = [
  { type: "function", name: "shell", description: "Run a command", strict: false, parameters: params },
  { type: "namespace", name: "mcp__docs", description: "Tools in the mcp__docs namespace.", tools: [
    { type: "function", name: "search", description: "Search the docs", strict: false, parameters: params, defer_loading: true },
    { type: "function", name: "fetch", description: "Fetch a page", strict: false, parameters: params },
  ] },
  { type: "web_search", external_web_access: true, user_location: { type: "approximate", country: "FR", city: "Paris" }, filters: { allowed_domains: ["example.com"] } },
  { type: "image_generation" },
];

describe("Responses tools on a translated upstream", () => {
  it("flat names are deterministic, within 64 characters and distinct", () => {
    expect(flatName("mcp__docs", "search")).toBe("mcp__docs__search");
    expect(flatName("my.server", "do it")).toBe("my_server__do_it");
    const long = flatName("mcp__".padEnd(60, "x"), "search");
    expect(long).toHaveLength(64);
    expect(long).toBe(flatName("mcp__".padEnd(60, "x"), "search"));
    expect(long).not.toBe(flatName("mcp__".padEnd(60, "x"), "searcH"));
  });

  it("chat upstream: namespaces flattened, web search and other built-ins dropped and named", () => {
    const t = translators.responses.chat!.request({ model: "m", input: "hi", tools: codexTools }, target, opts("openai"));
    const body = t.body as any;
    expect(body.tools.map((x: any) => x.function.name)).toEqual(["shell", "mcp__docs__search", "mcp__docs__fetch"]);
    expect(body.tools[1].function).toEqual({ name: "mcp__docs__search", description: "Search the docs", parameters: params, strict: false });
    expect(body.web_search_options).toBeUndefined();
    expect(t.dropped).toEqual(["tools[2].type=web_search", "tools[3].type=image_generation"]);
  });

  it("Anthropic and Gemini upstreams: web search goes along as the upstream's own search", () => {
    const messages = translators.responses.messages!.request({ model: "m", input: "hi", tools: codexTools }, target, opts("anthropic"));
    const tools = (messages.body as any).tools;
    expect(tools.map((x: any) => x.name)).toEqual(["shell", "mcp__docs__search", "mcp__docs__fetch", "web_search"]);
    expect(tools[3]).toEqual({ type: "web_search_20250305", name: "web_search", max_uses: 10, allowed_domains: ["example.com"], user_location: { type: "approximate", country: "FR", city: "Paris" } });
    expect(messages.dropped).toEqual(["tools[3].type=image_generation"]);
    // Gemini: grounding only without function declarations (Gemini 2.x refuses the pair).
    const alone = translators.responses.gemini!.request({ model: "m", input: "hi", tools: [{ type: "web_search" }] }, target, opts("gemini"));
    expect((alone.body as any).tools).toEqual([{ googleSearch: {} }]);
    const both = translators.responses.gemini!.request({ model: "m", input: "hi", tools: codexTools }, target, opts("gemini"));
    expect((both.body as any).tools).toEqual([{ functionDeclarations: expect.any(Array) }]);
    expect(both.dropped).toEqual(["tools[3].type=image_generation", "tools[2].type=web_search"]);
    // A search limited to OpenAI's cached index has no equivalent anywhere.
    const cached = translators.responses.messages!.request({ model: "m", input: "hi", tools: [{ type: "web_search", external_web_access: false }] }, target, opts("anthropic"));
    expect((cached.body as any).tools).toBeUndefined();
    expect(cached.dropped).toEqual(["tools[0].type=web_search"]);
  });

  it("history and tool_choice use the flat names; allowed_tools can keep a namespaced function", () => {
    const input = [
      { role: "user", content: "find it" },
      { type: "function_call", namespace: "mcp__docs", name: "search", call_id: "call_1", arguments: "{\"cmd\":\"q\"}" },
      { type: "function_call_output", call_id: "call_1", output: "found" },
    ];
    const t = translators.responses.chat!.request({
      model: "m", input, tools: codexTools,
      tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", namespace: "mcp__docs", name: "fetch" }] },
    }, target, opts("openai"));
    const body = t.body as any;
    expect(body.messages[1].tool_calls[0].function.name).toBe("mcp__docs__search");
    expect(body.tools.map((x: any) => x.function.name)).toEqual(["mcp__docs__fetch"]);
    expect(body.tool_choice).toBe("required");
    const forced = translators.responses.chat!.request({ model: "m", input, tools: codexTools, tool_choice: { type: "function", namespace: "mcp__docs", name: "fetch" } }, target, opts("openai"));
    expect((forced.body as any).tool_choice).toEqual({ type: "function", function: { name: "mcp__docs__fetch" } });
  });

  it("calls come back under the names the client knows, JSON and streamed", async () => {
    const tr = translators.responses.chat!;
    const t = tr.request({ model: "m", input: "hi", tools: codexTools }, target, opts("openai"));
    const call = { id: "call_9", type: "function", function: { name: "mcp__docs__fetch", arguments: "{}" } };
    const json = tr.response({ id: "c", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call, { ...call, id: "call_8", function: { name: "shell", arguments: "{}" } }] }, finish_reason: "tool_calls" }] }, t.state, {} as never) as any;
    expect(json.output.map((o: any) => [o.name, o.namespace])).toEqual([["fetch", "mcp__docs"], ["shell", undefined]]);
    expect("namespace" in json.output[1]).toBe(false);

    async function* chunks(): AsyncIterable<SseEvent> {
      yield { data: JSON.stringify({ id: "c", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", tool_calls: [{ index: 0, ...call, function: { name: "mcp__docs__fetch", arguments: "" } }] }, finish_reason: null }] }) };
      yield { data: JSON.stringify({ id: "c", created: 1, model: "m", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "{}" } }] }, finish_reason: "tool_calls" }] }) };
      yield { data: "[DONE]" };
    }
    const events: any[] = [];
    for await (const e of tr.stream(chunks(), t.state, {} as never)) events.push(JSON.parse(e.data));
    const items = events.filter((e) => e.type === "response.output_item.added" || e.type === "response.output_item.done").map((e) => e.item);
    for (const item of items) expect(item).toMatchObject({ type: "function_call", name: "fetch", namespace: "mcp__docs" });
    expect(events.find((e) => e.type === "response.function_call_arguments.done").name).toBe("fetch");
    expect(events.at(-1).response.output[0]).toMatchObject({ name: "fetch", namespace: "mcp__docs", arguments: "{}" });
  });
});
