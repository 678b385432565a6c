import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../core/errors.ts";
import { runFor } from "../testkit.ts";
import { readFileSync } from "node:fs";
import { walkRequest } from "./request.ts";
import { KNOWN_MESSAGES_BLOCKS, KNOWN_NESTED_BLOCKS } from "./unknown-blocks.ts";

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

describe("tool arguments at any depth", () => {
  const deep = (levels: number, leaf: unknown): any => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };
  const EMAIL = "bob@example.com";
  const KEY = "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Yx5Wv4Ut3Sr2Qp1On0Ml-AA";
  const RULES = { rules: [{ name: "pii", detect: ["email" as const], action: "redact" as const }, { name: "no-secrets", detect: ["secret" as const], action: "block" as const }] };
  const bodies = (leaf: string, levels: number) => ({
    openai: { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: JSON.stringify({ x: deep(levels, leaf) }) } }] }, { role: "user", content: "go" }] },
    anthropic: { messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: { x: deep(levels, leaf) } }] }, { role: "user", content: "go" }] },
    responses: { input: [{ type: "function_call", call_id: "c", name: "f", arguments: JSON.stringify({ x: deep(levels, leaf) }) }, { role: "user", content: "go" }] },
    gemini: { contents: [{ role: "model", parts: [{ functionCall: { name: "f", args: { x: deep(levels, leaf) } } }] }, { parts: [{ text: "go" }] }] },
  });

  for (const protocol of ["openai", "anthropic", "responses", "gemini"] as const) {
    it(`${protocol}: an email 70 arrays deep is redacted before it leaves, and a secret there refuses the request`, () => {
      const body = bodies(`mail ${EMAIL}`, 70)[protocol];
      const run = runFor(RULES, protocol);
      walkRequest(protocol, body, (t, topic) => run.input(t, topic));
      const sent = JSON.stringify(body);
      expect(sent).not.toContain(EMAIL);
      expect(sent).toContain("mail [EMAIL_1]");
      const secret = bodies(`key ${KEY}`, 70)[protocol];
      expect(() => walkRequest(protocol, secret, (t, topic) => runFor(RULES, protocol).input(t, topic))).toThrow(GatewayError);
    });
  }

  it("arguments nested far deeper than JSON.stringify can go are still redacted, the rest of the text kept as it came", () => {
    const levels = 200_000;
    const args = `{"x": ${"[".repeat(levels)}"mail ${EMAIL}"${"]".repeat(levels)}, "y": "a\\u0020b"}`;
    const body = { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }] }] };
    const run = runFor(RULES);
    walkRequest("openai", body, (t, topic) => run.input(t, topic));
    expect(body.messages[0]!.tool_calls[0]!.function.arguments).toBe(args.replace(`"mail ${EMAIL}"`, `"mail [EMAIL_1]"`));
  });

  it("an escaped email in arguments is found; keys are left alone", () => {
    const body = { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: '{"bob@example.com": "to b\\u006fb@example.com"}' } }] }] };
    const run = runFor(RULES);
    walkRequest("openai", body, (t, topic) => run.input(t, topic));
    expect(JSON.parse(body.messages[0]!.tool_calls[0]!.function.arguments)).toEqual({ "bob@example.com": "to [EMAIL_1]" });
  });
});

describe("messages blocks of types the gateway does not know (they reach Claude as sent)", () => {
  it("every string in them is handed over, at any depth, as the text of the turn they are in; their type tag is not", () => {
    const body = {
      messages: [
        { role: "user", content: "old" },
        { role: "assistant", content: [{ type: "compaction", content: "summary", extra: { deep: [["nested"]] } }, { type: "tool_use", id: "toolu_1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "weird", text: "in result" }] }, { type: "made_up", text: "new" }] },
      ],
    };
    expect(walk("anthropic", body)).toEqual(["old", "summary", "nested", "in result", "*new"]);
    expect(body.messages[1]!.content[0]).toEqual({ type: "compaction", content: "SUMMARY", extra: { deep: [["NESTED"]] } });
    expect((body.messages[2]!.content as any)[1]).toEqual({ type: "made_up", text: "NEW" });
  });

  it("one in a content document, and a block known only at the top of a turn found inside a tool result, are read whole", () => {
    const body = {
      messages: [
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "thinking", thinking: "slipped in", signature: "s" }] }, { type: "document", source: { type: "content", content: [{ type: "text", text: "a" }, { type: "made_up", note: "b" }] } }] },
      ],
    };
    expect(walk("anthropic", body)).toEqual(["slipped in", "s", "*a", "*b"]);
  });

  it("an unknown block with text is the turn's own text: the latest user turn is judged, not the one before", () => {
    expect(walk("anthropic", { messages: [{ role: "user", content: "old" }, { role: "user", content: [{ type: "made_up", text: "new" }] }] })).toEqual(["old", "*new"]);
    expect(walk("anthropic", { messages: [{ role: "user", content: "old" }, { role: "user", content: [{ type: "made_up", text: " " }] }] })).toEqual(["*old", " "]);
  });

  it("known blocks keep their opaque fields unread (signatures, base64 data, ids)", () => {
    const body = {
      messages: [
        { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "sig" }, { type: "redacted_thinking", data: "enc" }, { type: "tool_use", id: "toolu_1", name: "f", input: { q: "in" } }] },
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }, { type: "container_upload", file_id: "file_1" }, { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "BBBB" } }] }, { type: "text", text: "q" }] },
      ],
    };
    expect(walk("anthropic", body)).toEqual(["in", "*q"]);
  });

  it("the gateway's known types are the schema's (a type added there is not read whole by mistake)", () => {
    const defs = JSON.parse(readFileSync(new URL("../../../schemas/api/messages.schema.json", import.meta.url), "utf8")).definitions;
    expect([...KNOWN_MESSAGES_BLOCKS].sort()).toEqual([...defs.OtherContentBlock.if.properties.type.enum].sort());
    expect([...KNOWN_NESTED_BLOCKS].sort()).toEqual([...defs.OtherNestedBlock.if.properties.type.enum].sort());
  });
});
