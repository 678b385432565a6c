import { describe, expect, it } from "vitest";
import { walkRequest } from "./request.ts";

/** Every text the walker hands over, marked * when it is the latest user turn; each replaced by upper case. */
function walk(protocol: Parameters<typeof walkRequest>[0], body: any): string[] {
  const seen: string[] = [];
  walkRequest(protocol, body, (text, topic) => {
    seen.push(topic ? `*${text}` : text);
    return text.toUpperCase();
  });
  return seen;
}

describe("request walkers", () => {
  it("chat: system, messages, text parts and tool-call arguments (as JSON values)", () => {
    const body = {
      messages: [
        { role: "system", content: "sys" },
        { role: "user", content: "old" },
        { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: '{"q":"args"}' } }] },
        { role: "tool", tool_call_id: "c", content: "result" },
        { role: "user", content: [{ type: "text", text: "new" }, { type: "image_url", image_url: { url: "data:x" } }] },
      ],
    };
    expect(walk("openai", body)).toEqual(["sys", "old", "args", "result", "*new"]);
    expect(body.messages[2]!.tool_calls![0]!.function.arguments).toBe('{"q":"ARGS"}');
    expect((body.messages[4]!.content as any)[1].image_url.url).toBe("data:x");
  });

  it("messages: system blocks, tool_use input and tool_result content; thinking left alone", () => {
    const body = {
      system: [{ type: "text", text: "sys" }],
      messages: [
        { role: "user", content: "old" },
        { role: "assistant", content: [{ type: "thinking", thinking: "secret thoughts", signature: "sig" }, { type: "tool_use", id: "t", name: "f", input: { q: "in" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "out" }] }, { type: "text", text: "new" }] },
      ],
    };
    expect(walk("anthropic", body)).toEqual(["sys", "old", "in", "out", "*new"]);
    expect((body.messages[1]!.content as any)[0].thinking).toBe("secret thoughts");
  });

  it("responses: instructions, message items, function calls and outputs; reasoning left alone", () => {
    const body = {
      instructions: "sys",
      input: [
        { role: "user", content: "old" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "hidden" }], encrypted_content: "enc" },
        { type: "function_call", call_id: "c", name: "f", arguments: '{"q":"args"}' },
        { type: "function_call_output", call_id: "c", output: "result" },
        { role: "user", content: [{ type: "input_text", text: "new" }] },
      ],
    };
    expect(walk("responses", body)).toEqual(["sys", "old", "args", "result", "*new"]);
    expect(walk("responses", { input: "just text" })).toEqual(["*just text"]);
  });

  it("gemini: systemInstruction, text parts (not thoughts), function calls and responses", () => {
    const body = {
      systemInstruction: { parts: [{ text: "sys" }] },
      contents: [
        { role: "user", parts: [{ text: "old" }] },
        { role: "model", parts: [{ text: "thinking", thought: true }, { functionCall: { name: "f", args: { q: "args" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "f", response: { r: "result" } } }] },
        { parts: [{ text: "new" }] },
      ],
    };
    expect(walk("gemini", body)).toEqual(["sys", "old", "args", "result", "*new"]);
  });
});
