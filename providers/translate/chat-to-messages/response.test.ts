// A Claude answer as a chat client gets it: a refusal with no text has content null beside its refusal, as OpenAI's.
import { describe, expect, it } from "vitest";
import { messagesToChatResponse } from "./response.ts";

const answer = (extra: Record<string, unknown>) => ({
  id: "msg_1", type: "message", role: "assistant", model: "claude-x", usage: { input_tokens: 5, output_tokens: 2 }, ...extra,
});

describe("a Claude refusal as a chat answer", () => {
  it("with no content blocks: content null, the explanation as refusal, finish content_filter", () => {
    const chat = messagesToChatResponse(answer({ content: [], stop_reason: "refusal", stop_details: { type: "refusal", category: "cyber", explanation: "I can't help with that." } })) as any;
    expect(chat.choices[0].message).toEqual({ role: "assistant", content: null, refusal: "I can't help with that." });
    expect(chat.choices[0].finish_reason).toBe("content_filter");
  });

  it("with text before it: the text stays the content", () => {
    const chat = messagesToChatResponse(answer({ content: [{ type: "text", text: "Partial" }], stop_reason: "refusal", stop_details: { type: "refusal", explanation: "Stopped." } })) as any;
    expect(chat.choices[0].message).toMatchObject({ content: "Partial", refusal: "Stopped." });
  });

  it("an empty answer that is no refusal keeps content \"\" and refusal null", () => {
    const chat = messagesToChatResponse(answer({ content: [], stop_reason: "end_turn" })) as any;
    expect(chat.choices[0].message).toEqual({ role: "assistant", content: "", refusal: null });
  });
});

describe("a Claude web search answer as a chat answer", () => {
  const source = (url: string, title: string) => ({ type: "web_search_result_location", url, title, cited_text: "Sunny, 22°C", encrypted_index: "Eo8B" });
  const searched = answer({
    stop_reason: "end_turn",
    content: [
      { type: "text", text: "Let me look. " },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "weather paris" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://meteo.fr/paris", title: "Paris — Météo", encrypted_content: "x" }] },
      { type: "text", text: "It is “sunny” in Paris", citations: [source("https://meteo.fr/paris", "Paris — Météo"), source("https://meteo.fr/paris", "Paris — Météo"), source("https://wx.example/p", "WX")] },
      { type: "text", text: " today.", citations: null },
    ],
  });

  it("each cited source is a url_citation spanning its text block, in UTF-16 indexes of the content", () => {
    const msg = (messagesToChatResponse(searched) as any).choices[0].message;
    expect(msg.content).toBe("Let me look. It is “sunny” in Paris today.");
    expect(msg.annotations).toEqual([
      { type: "url_citation", url_citation: { start_index: 13, end_index: 35, url: "https://meteo.fr/paris", title: "Paris — Météo" } },
      { type: "url_citation", url_citation: { start_index: 13, end_index: 35, url: "https://wx.example/p", title: "WX" } },
    ]);
    expect(msg.content.slice(13, 35)).toBe("It is “sunny” in Paris");
  });

  it("an answer citing nothing has no annotations field", () => {
    const msg = (messagesToChatResponse(answer({ content: [{ type: "text", text: "Hi", citations: [] }], stop_reason: "end_turn" })) as any).choices[0].message;
    expect(msg).toEqual({ role: "assistant", content: "Hi", refusal: null });
  });
});

describe("the tier that served a Claude answer, as a chat answer's service_tier", () => {
  const tiered = (service_tier: unknown) => messagesToChatResponse(answer({ content: [{ type: "text", text: "Hi" }], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 2, service_tier } })) as any;

  it("Anthropic's standard is OpenAI's default, priority is priority, another is passed on as given", () => {
    expect(tiered("standard").service_tier).toBe("default");
    expect(tiered("priority").service_tier).toBe("priority");
    expect(tiered("batch").service_tier).toBe("batch");
  });

  it("an answer naming no tier has no service_tier", () => {
    expect("service_tier" in tiered(undefined)).toBe(false);
    expect("service_tier" in tiered(null)).toBe(false);
  });
});
