import { describe, expect, it } from "vitest";
import { identity } from "./index.ts";
import { encodeReasoning } from "../responses-to-chat/reasoning.ts";
import { toolCallId } from "../chat-to-gemini/response.ts";

const target = { modelId: "m", provider: "p", upstreamModel: "x", pricing: {} } as any;
const body = { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "q", cache_control: { type: "ephemeral" } }] }] };
const opts = (driverProtocol: string, cacheMarkers = true) => ({ cacheMarkers, cacheAuto: false, driverProtocol, provider: "p" });

describe("identity translator", () => {
  it("passes chat through to Anthropic-speaking drivers, strips cache markers for the others", () => {
    expect(identity("chat").request(body, target, opts("anthropic")).body).toBe(body);
    const t = identity("chat").request(body, target, opts("openai"));
    expect(t).toMatchObject({ op: "chat", dropped: [] });
    expect(JSON.stringify(t.body)).not.toContain("cache_control");
    expect(identity("chat").request(body, target, opts("openai", false)).body).toBe(body);
    expect(identity("messages").request(body, target, opts("openai")).body).toBe(body);
  });

  it("responses: reasoning items the gateway encoded for a translated upstream are dropped (a native one cannot verify them)", () => {
    const ours = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: encodeReasoning("messages", [{ type: "reasoning.text", text: "t", signature: "s" }]) };
    const openais = { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAAABnative" };
    const fc = { type: "function_call", call_id: "c", name: "f", arguments: "{}" };
    const t = identity("responses").request({ model: "m", input: [ours, fc, openais] }, target, opts("openai"));
    expect(t).toMatchObject({ op: "responses", body: { model: "m", input: [fc, openais] }, dropped: ["input[0]"] });
    const plain = { model: "m", input: [openais, fc] };
    expect(identity("responses").request(plain, target, opts("openai")).body).toBe(plain);
  });

  it("responses with store: false: a reasoning item without encrypted_content (a translated turn's, Codex after a model switch) is dropped", () => {
    const bare = { type: "reasoning", id: "rs_5fe6", summary: [{ type: "summary_text", text: "thought" }] };
    const openais = { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAAABnative" };
    const fc = { type: "function_call", call_id: "c", name: "f", arguments: "{}" };
    const t = identity("responses").request({ model: "m", store: false, input: [bare, fc, openais] }, target, opts("openai"));
    expect(t).toMatchObject({ body: { input: [fc, openais] }, dropped: ["input[0]"] });
    // Stored (the default): such an item may name OpenAI's own stored reasoning, and goes as sent.
    const stored = { model: "m", input: [bare, fc] };
    expect(identity("responses").request(stored, target, opts("openai")).body).toBe(stored);
  });

  it("chat: tool-call ids a Gemini model made (its signature inside) go to the upstream without the signature, calls and results alike", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(120) });
    const loop = { model: "m", messages: [{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: id, content: "r" }] };
    const sent = identity("chat").request(loop, target, opts("openai")).body as any;
    expect(sent.messages[1].tool_calls[0].id).toBe("call_abc");
    expect(sent.messages[2].tool_call_id).toBe("call_abc");
  });
});
