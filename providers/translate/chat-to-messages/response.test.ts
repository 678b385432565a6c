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
