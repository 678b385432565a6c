import { describe, expect, it } from "vitest";
import { toolCallId } from "./chat-to-gemini/response.ts";
import { chatWithoutToolIdSignatures, messagesWithoutToolIdSignatures, responsesWithoutToolIdSignatures } from "./tool-id-signatures.ts";

describe("tool ids without Gemini's signature, for native upstreams of other protocols", () => {
  it("chatWithoutToolIdSignatures: calls and results of a chat body lose the suffix alike; an unsigned body is the same object", () => {
    const id = toolCallId({ functionCall: { id: "call_0123abcd" }, thoughtSignature: "x".repeat(200) });
    const body = {
      model: "m",
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }, { id: "call_plain", type: "function", function: { name: "g", arguments: "{}" } }] },
        { role: "tool", tool_call_id: id, content: "sunny" },
        { role: "tool", tool_call_id: "call_plain", content: "ok" },
      ],
    };
    const out = chatWithoutToolIdSignatures(body);
    expect(out.messages[1].tool_calls.map((c: any) => c.id)).toEqual(["call_0123abcd", "call_plain"]);
    expect(out.messages[2].tool_call_id).toBe("call_0123abcd");
    expect(out.messages[3]).toBe(body.messages[3]);
    expect(body.messages[2].tool_call_id).toBe(id); // the client's body is not changed
    const plain = { messages: [body.messages[0], body.messages[3]] };
    expect(chatWithoutToolIdSignatures(plain)).toBe(plain);
  });

  it("Responses: call_id of calls and outputs (function and custom tools) lose it alike; unsigned bodies are the same object", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(300) });
    const body = { model: "m", input: [
      { role: "user", content: "x" },
      { type: "function_call", call_id: id, name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: id, output: "r" },
      { type: "function_call", call_id: "call_plain", name: "g", arguments: "{}" },
    ] };
    const out = responsesWithoutToolIdSignatures(body);
    expect(out.input.map((i: any) => i.call_id)).toEqual([undefined, "call_abc", "call_abc", "call_plain"]);
    expect(out.input[3]).toBe(body.input[3]);
    expect(body.input[1]!.call_id).toBe(id);
    const plain = { model: "m", input: [body.input[0], body.input[3]] };
    expect(responsesWithoutToolIdSignatures(plain)).toBe(plain);
  });

  it("Messages: tool_use ids and tool_result tool_use_ids lose it alike", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(300) });
    const body = { model: "m", max_tokens: 5, messages: [
      { role: "user", content: "x" },
      { role: "assistant", content: [{ type: "text", text: "ok" }, { type: "tool_use", id, name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "r" }] },
    ] };
    const out = messagesWithoutToolIdSignatures(body);
    expect(out.messages[1].content[1].id).toBe("call_abc");
    expect(out.messages[2].content[0].tool_use_id).toBe("call_abc");
    expect(out.messages[0]).toBe(body.messages[0]);
    const plain = { messages: [body.messages[0]] };
    expect(messagesWithoutToolIdSignatures(plain)).toBe(plain);
  });
});
