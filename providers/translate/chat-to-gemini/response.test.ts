import { describe, expect, it } from "vitest";
import { fromGeminiUsage, geminiToChatResponse, geminiToOpenAIUsage } from "./response.ts";
import { costParts } from "../../../core/money/money.ts";

// A googleSearch-grounded answer: the search results the model read are toolUsePromptTokenCount, apart from
// promptTokenCount (totalTokenCount = prompt + tool use + candidates), and billed as input.
const GROUNDED = { promptTokenCount: 1000, toolUsePromptTokenCount: 20_000, candidatesTokenCount: 500, totalTokenCount: 21_500 };
const FLASH = { input: "0.0000003", output: "0.0000025" };

describe("Gemini usage", () => {
  it("bills tool-use prompt tokens as input: $0.00755, not $0.00155", () => {
    const u = fromGeminiUsage(GROUNDED);
    expect(u).toEqual({ inputTokens: 21_000, outputTokens: 500 });
    expect(costParts(u, FLASH).usd).toBe("0.00755");
  });

  it("cached tokens come out of promptTokenCount only, tool-use tokens are added beside them", () => {
    expect(fromGeminiUsage({ ...GROUNDED, cachedContentTokenCount: 600, thoughtsTokenCount: 50 })).toEqual({ inputTokens: 20_400, outputTokens: 550, cacheReadTokens: 600, reasoningTokens: 50 });
  });

  it("a chat client's prompt_tokens count them too", () => {
    expect(geminiToOpenAIUsage(GROUNDED)).toMatchObject({ prompt_tokens: 21_000, completion_tokens: 500, total_tokens: 21_500 });
  });
});

// A googleSearch-grounded Gemini answer: segments count UTF-8 bytes of the answer text (startIndex 0 left out, as
// proto3 does); chat annotations count UTF-16 code units.
const GROUNDED_TEXT = ["Il fait “beau” à Paris.", " 🌞 Low 12°C."];
export const GROUNDING = {
  groundingChunks: [{ web: { uri: "https://meteo.fr/paris", title: "meteo.fr" } }, { web: { uri: "https://wx.example/p", title: "wx.example" } }],
  groundingSupports: [
    { segment: { endIndex: 28, text: "Il fait “beau” à Paris." }, groundingChunkIndices: [0, 1] },
    { segment: { startIndex: 33, endIndex: 44, text: "Low 12°C." }, groundingChunkIndices: [1] },
  ],
  webSearchQueries: ["météo paris"],
};
const GROUNDED_ANNOTATIONS = [
  { type: "url_citation", url_citation: { start_index: 0, end_index: 23, url: "https://meteo.fr/paris", title: "meteo.fr" } },
  { type: "url_citation", url_citation: { start_index: 0, end_index: 23, url: "https://wx.example/p", title: "wx.example" } },
  { type: "url_citation", url_citation: { start_index: 26, end_index: 36, url: "https://wx.example/p", title: "wx.example" } },
];

describe("Gemini sources as chat annotations", () => {
  it("groundingSupports cite groundingChunks: url_citation annotations at UTF-16 indexes of the content", () => {
    const chat: any = geminiToChatResponse({ candidates: [{ index: 0, finishReason: "STOP", content: { role: "model", parts: GROUNDED_TEXT.map((text) => ({ text })) }, groundingMetadata: GROUNDING }] }, "gemini-x");
    const msg = chat.choices[0].message;
    expect(msg.annotations).toEqual(GROUNDED_ANNOTATIONS);
    expect(msg.content.slice(26, 36)).toBe(" Low 12°C.");
  });

  it("recited sources (citationMetadata: citationSources, or Vertex's citations with a title) too", () => {
    const cand = (citationMetadata: unknown) => ({ candidates: [{ index: 0, finishReason: "STOP", content: { role: "model", parts: [{ text: "für alle" }] }, citationMetadata }] });
    const a: any = geminiToChatResponse(cand({ citationSources: [{ startIndex: 0, endIndex: 4, uri: "https://github.com/x/y", license: "mit" }] }), "g");
    expect(a.choices[0].message.annotations).toEqual([{ type: "url_citation", url_citation: { start_index: 0, end_index: 3, url: "https://github.com/x/y", title: "" } }]);
    const v: any = geminiToChatResponse(cand({ citations: [{ startIndex: 5, endIndex: 9, uri: "https://a.example/", title: "A" }] }), "g");
    expect(v.choices[0].message.annotations).toEqual([{ type: "url_citation", url_citation: { start_index: 4, end_index: 8, url: "https://a.example/", title: "A" } }]);
  });

  it("an answer citing nothing has no annotations field", () => {
    const chat: any = geminiToChatResponse({ candidates: [{ index: 0, finishReason: "STOP", content: { role: "model", parts: [{ text: "hi" }] } }] }, "g");
    expect(chat.choices[0].message).toEqual({ role: "assistant", content: "hi", refusal: null });
  });
});
