import { describe, expect, it } from "vitest";
import type { Target } from "../../core/contracts/provider.ts";
import { chatToMessagesRequest } from "./chat-to-messages/request.ts";
import { chatToGeminiRequest } from "./chat-to-gemini/request.ts";
import { responsesToMessages } from "./responses-to-messages/index.ts";
import { DEFAULT_WEB_SEARCH_USES } from "../../core/metering/server-tools.ts";

const target: Target = { modelId: "x/m", provider: "up", upstreamModel: "m", pricing: {} };
const fn = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } };
const chat = (extra: Record<string, unknown>) => ({ model: "m", messages: [{ role: "user", content: "latest news?" }], ...extra });
const search = { user_location: { type: "approximate", approximate: { country: "GB", city: "London" } }, search_context_size: "high", allowed_domains: ["bbc.co.uk"] };

describe("chat web_search_options on upstreams that search", () => {
  it("Anthropic: the web_search server tool beside the functions; what it cannot take is named", () => {
    const t = chatToMessagesRequest(chat({ tools: [fn], web_search_options: search }), target);
    expect(t.body.tools).toEqual([
      { name: "lookup", input_schema: fn.function.parameters },
      { type: "web_search_20250305", name: "web_search", max_uses: DEFAULT_WEB_SEARCH_USES, allowed_domains: ["bbc.co.uk"], user_location: { type: "approximate", country: "GB", city: "London" } },
    ]);
    expect(t.dropped).toEqual(["web_search_options.search_context_size"]);
    // Chat has no search limit of its own: Claude is held to the ceiling the budget reserves (each search is billed).
    expect(chatToMessagesRequest(chat({ web_search_options: {} }), target).body.tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: DEFAULT_WEB_SEARCH_USES }]);
  });

  it("Anthropic: no search when tools are off, in JSON mode, or when a function already has its name", () => {
    for (const extra of [{ tool_choice: "none" }, { response_format: { type: "json_object" } }, { tools: [{ ...fn, function: { ...fn.function, name: "web_search" } }] }]) {
      const t = chatToMessagesRequest(chat({ web_search_options: {}, ...extra }), target);
      expect(JSON.stringify(t.body.tools ?? [])).not.toContain("web_search_20250305");
      expect(t.dropped).toContain("web_search_options");
    }
  });

  it("Gemini: googleSearch alone; beside function declarations (which Gemini 2.x refuses) it is dropped and named", () => {
    expect(chatToGeminiRequest(chat({ web_search_options: {} }), target).body.tools).toEqual([{ googleSearch: {} }]);
    const both = chatToGeminiRequest(chat({ tools: [fn], web_search_options: {} }), target);
    expect(both.body.tools).toEqual([{ functionDeclarations: [expect.objectContaining({ name: "lookup" })] }]);
    expect(both.dropped).toContain("web_search_options");
  });

  it("Responses on Claude: max_tool_calls becomes the search tool's max_uses (0: no search), else the ceiling", () => {
    const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: "anthropic", provider: "up" };
    const req = (extra: Record<string, unknown>) => responsesToMessages.request({ model: "m", input: "latest news?", tools: [{ type: "web_search" }], ...extra }, target, opts).body as any;
    expect(req({ max_tool_calls: 3 }).tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: 3 }]);
    expect(req({}).tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: DEFAULT_WEB_SEARCH_USES }]);
    expect(req({ max_tool_calls: 0 }).tools).toBeUndefined();
  });
});
