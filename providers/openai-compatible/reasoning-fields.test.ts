import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { fitReasoningFields, reasoningFieldOf } from "./reasoning-fields.ts";
import { addReplayedText } from "../translate/replayed-reasoning-text.ts";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";

const openai = (extra: Partial<ProviderConfig> = {}): ProviderConfig => ({ protocol: "openai", ...extra });

describe("reasoningFieldOf: the host's convention", () => {
  it.each([
    ["https://api.groq.com/openai/v1", "reasoning"],
    ["https://api.deepseek.com/v1", "reasoning_content"],
    ["https://api.deepseek.com", "reasoning_content"],
    ["https://openrouter.ai/api/v1", "reasoning_details"],
    ["https://api.mistral.ai/v1", "none"],
    ["https://eu.api.groq.com/openai/v1", "reasoning"],
    ["https://api.openai.com/v1", "passthrough"],
    ["http://127.0.0.1:8000/v1", "passthrough"],
    ["https://notgroq.com/v1", "passthrough"],
    ["https://api.groq.com.evil.example/v1", "passthrough"],
  ])("%s -> %s", (url, field) => {
    expect(reasoningFieldOf(openai(), url)).toBe(field);
  });

  it("the provider's reasoning_field overrides the recognition (a vLLM on loopback, a proxy in front of Groq)", () => {
    expect(reasoningFieldOf(openai({ reasoning_field: "reasoning_content" }), "http://127.0.0.1:8000/v1")).toBe("reasoning_content");
    expect(reasoningFieldOf(openai({ reasoning_field: "passthrough" }), "https://api.groq.com/openai/v1")).toBe("passthrough");
  });

  it("the shipped gateway.yaml's providers are recognised as their hosts", () => {
    const shipped = YAML.parse(readFileSync(new URL("../../gateway.yaml", import.meta.url), "utf8")).providers;
    expect(reasoningFieldOf(shipped.groq, shipped.groq.base_url)).toBe("reasoning");
    expect(reasoningFieldOf(shipped.deepseek, shipped.deepseek.base_url)).toBe("reasoning_content");
    expect(reasoningFieldOf(shipped.mistral, shipped.mistral.base_url)).toBe("none");
  });
});

// opencode (@ai-sdk/openai-compatible) and Qwen Code: the previous answer's reasoning text comes back as reasoning_content.
const echoed = [
  { role: "user", content: "Weather in Paris?" },
  { role: "assistant", content: "", reasoning_content: "Thinking it over.", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
  { role: "tool", tool_call_id: "call_1", content: "21C" },
];

describe("fitReasoningFields", () => {
  it("Groq: reasoning_content becomes reasoning; nothing is lost, nothing named; the client's messages are left alone", () => {
    const before = structuredClone(echoed);
    const r = fitReasoningFields(echoed, "reasoning");
    expect((r.messages as any[])[1]).toEqual({ role: "assistant", content: "", reasoning: "Thinking it over.", tool_calls: echoed[1]!.tool_calls });
    expect((r.messages as any[])[0]).toBe(echoed[0]);
    expect(r.dropped).toEqual([]);
    expect(echoed).toEqual(before);
  });

  it("DeepSeek: a text sent back as reasoning becomes reasoning_content (the tool loop needs it there)", () => {
    const r = fitReasoningFields([{ role: "assistant", content: null, reasoning: "R", tool_calls: [] }], "reasoning_content");
    expect(r.messages).toEqual([{ role: "assistant", content: null, reasoning_content: "R", tool_calls: [] }]);
    expect(r.dropped).toEqual([]);
  });

  it("OpenRouter: the text in reasoning, its reasoning_details kept; LiteLLM's thinking_blocks dropped and named", () => {
    const details = [{ type: "reasoning.encrypted", data: "gAAA", format: "openai-responses-v1", index: 0 }];
    const r = fitReasoningFields([{ role: "assistant", content: "x", reasoning_content: "R", reasoning_details: details, thinking_blocks: [{ type: "thinking", thinking: "R", signature: "s" }] }], "reasoning_details");
    expect(r.messages).toEqual([{ role: "assistant", content: "x", reasoning: "R", reasoning_details: details }]);
    expect(r.dropped).toEqual(["messages[0].thinking_blocks"]);
  });

  it("Groq refuses reasoning_details: the signed entries another host made are dropped and named", () => {
    const r = fitReasoningFields([{ role: "assistant", content: "x", reasoning_content: "R", reasoning_details: [{ type: "reasoning.text", text: "R", signature: "sig" }] }], "reasoning");
    expect(r.messages).toEqual([{ role: "assistant", content: "x", reasoning: "R" }]);
    expect(r.dropped).toEqual(["messages[0].reasoning_details"]);
  });

  it("the same text in both fields is one text (not named); two different texts keep the host's and name the other", () => {
    expect(fitReasoningFields([{ role: "assistant", content: "x", reasoning: "R", reasoning_content: "R" }], "reasoning")).toEqual({ messages: [{ role: "assistant", content: "x", reasoning: "R" }], dropped: [] });
    expect(fitReasoningFields([{ role: "assistant", content: "x", reasoning: "A", reasoning_content: "B" }], "reasoning_content")).toEqual({
      messages: [{ role: "assistant", content: "x", reasoning_content: "B" }], dropped: ["messages[0].reasoning"],
    });
  });

  it("Mistral (none): every reasoning field goes, named when it held something; empty ones go silently", () => {
    const r = fitReasoningFields([{ role: "user", content: "hi" }, { role: "assistant", content: "x", reasoning_content: "R", reasoning: "", reasoning_details: [] }], "none");
    expect(r.messages).toEqual([{ role: "user", content: "hi" }, { role: "assistant", content: "x" }]);
    expect(r.dropped).toEqual(["messages[1].reasoning_content"]);
  });

  it("an empty or null reasoning is removed without a report (Groq refuses an empty one on models that do not reason)", () => {
    expect(fitReasoningFields([{ role: "assistant", content: "x", reasoning: "", reasoning_content: null }], "reasoning")).toEqual({ messages: [{ role: "assistant", content: "x" }], dropped: [] });
  });

  it("a reasoning that is not text cannot be moved: dropped and named", () => {
    expect(fitReasoningFields([{ role: "assistant", content: "x", reasoning_content: { text: "R" } }], "reasoning")).toEqual({ messages: [{ role: "assistant", content: "x" }], dropped: ["messages[0].reasoning_content"] });
  });

  it("a translation's reasoning text (no field the client sent) goes only to a host that takes text back, never named", () => {
    const turn = () => {
      const m = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "w", arguments: "{}" } }] };
      addReplayedText(m, "Check Paris.");
      return [m];
    };
    expect(fitReasoningFields(turn(), "reasoning_content")).toEqual({ messages: [{ ...turn()[0], reasoning_content: "Check Paris." }], dropped: [] });
    expect(fitReasoningFields(turn(), "reasoning").messages).toEqual([{ ...turn()[0], reasoning: "Check Paris." }]);
    expect(fitReasoningFields(turn(), "reasoning_details").messages).toEqual([{ ...turn()[0], reasoning: "Check Paris." }]);
    // An unknown host (passthrough) and `none`: the request goes without it, and nothing is named dropped.
    for (const field of ["passthrough", "none"] as const) {
      const r = fitReasoningFields(turn(), field);
      expect(JSON.parse(JSON.stringify(r.messages))).toEqual([{ role: "assistant", content: null, tool_calls: turn()[0]!.tool_calls }]);
      expect(r.dropped).toEqual([]);
    }
  });

  it("passthrough, messages without reasoning and other roles are returned as they are", () => {
    expect(fitReasoningFields(echoed, "passthrough").messages).toBe(echoed);
    const plain = [{ role: "assistant", content: "x" }, { role: "user", content: "y", reasoning_content: "not an answer's" }];
    expect(fitReasoningFields(plain, "reasoning").messages).toBe(plain);
    expect(fitReasoningFields(undefined, "reasoning")).toEqual({ messages: undefined, dropped: [] });
  });
});
