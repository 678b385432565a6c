import { describe, expect, it } from "vitest";
import type { Target } from "../../core/contracts/provider.ts";
import { GatewayError, invalidRequest } from "../../core/errors.ts";
import { Unsupported } from "../../core/contracts/translator.ts";
import { clientName, forClient } from "./client-names.ts";
import { messagesToChatRequest } from "./messages-to-chat/request.ts";
import { responsesToChatRequest } from "./responses-to-chat/request.ts";
import { geminiToChatRequest } from "./gemini-to-chat/request.ts";

const target: Target = { modelId: "m/m", provider: "p", upstreamModel: "m", pricing: {} };
const gemini = (body: unknown) => geminiToChatRequest(body, target, { flavor: "messages", provider: "p" }, "p").body;

describe("clientName: a chat body's field as its client sent it", () => {
  it("a chat client's body is named as it is", () => {
    expect(clientName({ model: "m", messages: [] }, "messages[3].content[0].image_url.url")).toBe("messages[3].content[0].image_url.url");
    expect(clientName(undefined, "stop")).toBe("stop");
  });

  it("fields the client's body decides: Responses user / safety_identifier, the logprobs it asked for", () => {
    const chat = (body: Record<string, unknown>) => responsesToChatRequest({ model: "m", input: "x", ...body }).body;
    expect(clientName(chat({ user: "u" }), "user")).toBe("user");
    expect(clientName(chat({ safety_identifier: "s" }), "user")).toBe("safety_identifier");
    expect(clientName(chat({ top_logprobs: 2 }), "logprobs")).toBe("top_logprobs");
    expect(clientName(chat({ include: ["message.output_text.logprobs"] }), "logprobs")).toBe("include.message.output_text.logprobs");
    expect(clientName(chat({}), "max_completion_tokens")).toBe("max_output_tokens");
  });

  it("a field under a mapped one is the mapped one (the nearest certain prefix); one with no counterpart keeps chat's name", () => {
    const chat = responsesToChatRequest({ model: "m", input: "x" }).body;
    expect(clientName(chat, "response_format.json_schema.name")).toBe("text.format");
    expect(clientName(chat, "temperature")).toBe("temperature");
    expect(clientName(chat, "messages")).toBe("input");
  });

  it("an element made of several client messages, or of a string, is named by the list: never a wrong index", () => {
    // Two Gemini user contents merge into one chat message; Responses' string input is no item of its own.
    const merged = gemini({ contents: [{ role: "user", parts: [{ text: "a" }] }, { role: "user", parts: [{ text: "b" }, { inlineData: { mimeType: "image/png", data: "AA" } }] }] });
    expect(clientName(merged, "messages[0].content")).toBe("contents");
    expect(clientName(merged, "messages[0].content[2].image_url.url")).toBe("contents[1].parts[1].inlineData");
    expect(clientName(responsesToChatRequest({ model: "m", instructions: "s", input: "x" }).body, "messages[1].content")).toBe("input");
    expect(clientName(responsesToChatRequest({ model: "m", instructions: "s", input: "x" }).body, "messages[0].content")).toBe("instructions");
    // A Messages string turn merged with the next: its text block is the gateway's, the image the client's.
    const m = messagesToChatRequest({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "a" }, { role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }] }).body;
    expect(clientName(m, "messages[0].content[0]")).toBe("messages");
    expect(clientName(m, "messages[0].content[1].image_url.url")).toBe("messages[1].content[0].source.url");
    expect(clientName(m, "messages[7].content")).toBe("messages"); // no such chat message
  });

  it("the mark is invisible: never serialised or compared", () => {
    const chat = messagesToChatRequest({ model: "m", max_tokens: 5, stop_sequences: ["x"], messages: [{ role: "user", content: "a" }] }).body;
    expect(clientName(chat, "stop")).toBe("stop_sequences");
    // toEqual compares enumerable symbol keys too: a mark that showed would fail this.
    expect(JSON.parse(JSON.stringify(chat))).toEqual(chat);
    expect(Object.keys(chat)).toEqual(["model", "messages", "max_tokens", "stop"]);
  });
});

describe("forClient: a refusal naming the client's field", () => {
  const chat = messagesToChatRequest({ model: "m", max_tokens: 5, stop_sequences: ["x"], messages: [{ role: "user", content: "a" }] }).body;

  it("renames the field in details, param and message, keeping what else the error says", () => {
    const err = new GatewayError(400, "INVALID_REQUEST", "stop: at most 4", { details: { field: "stop", provider: "p" }, retryable: true, headers: { "x-a": "1" } });
    const named = forClient(err, chat) as GatewayError;
    expect(named.message).toBe("stop_sequences: at most 4");
    expect(named.details).toEqual({ field: "stop_sequences", provider: "p" });
    expect(named.toJSON().error.param).toBe("stop_sequences");
    expect([named.status, named.code, named.retryable, named.headers]).toEqual([400, "INVALID_REQUEST", true, { "x-a": "1" }]);
    // A message that does not begin with the field gets it in front.
    expect((forClient(invalidRequest("too many", "user"), chat) as GatewayError).message).toBe("metadata.user_id: too many");
  });

  it("an Unsupported stays one (the target is passed over); what needs no renaming is the same object", () => {
    const named = forClient(new Unsupported(invalidRequest("stop: x", "stop")), chat);
    expect(named).toBeInstanceOf(Unsupported);
    expect((named as Unsupported).error.details?.field).toBe("stop_sequences");
    const same = invalidRequest("temperature: x", "temperature");
    expect(forClient(same, chat)).toBe(same);
    const plain = new Error("boom");
    expect(forClient(plain, chat)).toBe(plain);
    expect(forClient(invalidRequest("stop: x", "stop"), { messages: [] })).toMatchObject({ details: { field: "stop" } });
  });
});
