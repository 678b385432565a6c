import { describe, expect, it } from "vitest";
import { identity } from "./index.ts";
import { encodeReasoning } from "../responses-to-chat/reasoning.ts";
import { toolCallId } from "../chat-to-gemini/response.ts";
import { chatToResponse, echoOf } from "../responses-to-chat/response.ts";

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

  it("responses: a translated turn's reasoning item (no state: Gemini, Groq) sent back by Codex (store false, include) is dropped, not sent to OpenAI as an id it never issued", () => {
    const groq = { id: "c", created: 1, model: "gpt-oss", choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok", reasoning: "thinking" } }] };
    const turn: any = chatToResponse(groq, echoOf({ model: "m", input: "x" }), { flavor: "chat", provider: "groq", show: true });
    const reasoning = turn.output[0];
    expect(reasoning.type).toBe("reasoning");
    const next = { model: "m", store: false, include: ["reasoning.encrypted_content"], input: [{ role: "user", content: "x" }, reasoning, { role: "user", content: "more" }] };
    const t = identity("responses").request(next, target, opts("openai"));
    expect((t.body as any).input.map((i: any) => i.type ?? i.role)).toEqual(["user", "user"]);
    expect(t.dropped).toEqual(["input[1]"]);
  });

  it("responses and messages: a Gemini-made call id loses its signature on the native passthrough (Codex, Claude Code after /model)", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(300) });
    const r = identity("responses").request({ model: "m", store: false, input: [{ type: "function_call", call_id: id, name: "f", arguments: "{}" }, { type: "function_call_output", call_id: id, output: "r" }] }, target, opts("openai"));
    expect((r.body as any).input.map((i: any) => i.call_id)).toEqual(["call_abc", "call_abc"]);
    const m = identity("messages").request({ model: "m", max_tokens: 5, messages: [{ role: "assistant", content: [{ type: "tool_use", id, name: "f", input: {} }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "r" }] }] }, target, opts("anthropic"));
    expect([(m.body as any).messages[0].content[0].id, (m.body as any).messages[1].content[0].tool_use_id]).toEqual(["call_abc", "call_abc"]);
  });

  it("messages: tool ids another host issued (a chat upstream's functions.get_weather:0) reach Anthropic with only [A-Za-z0-9_-], call and result alike; others unchanged", () => {
    const loop = (ids: string[]) => ({ model: "m", max_tokens: 5, messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: ids.map((id) => ({ type: "tool_use", id, name: "f", input: {} })) },
      { role: "user", content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "r" })) },
    ] });
    const sent = identity("messages").request(loop(["functions.get_weather:0", "functions_get_weather_0", "toolu_01A"]), target, opts("anthropic")).body as any;
    const uses = sent.messages[1].content.map((b: any) => b.id);
    for (const id of uses) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(sent.messages[2].content.map((b: any) => b.tool_use_id)).toEqual(uses);
    expect(new Set(uses).size).toBe(3);
    expect(uses.slice(1)).toEqual(["functions_get_weather_0", "toolu_01A"]);
    const plain = loop(["toolu_01A"]);
    expect(identity("messages").request(plain, target, opts("anthropic")).body).toBe(plain);
  });

  it("chat: tool-call ids a Gemini model made (its signature inside) go to the upstream without the signature, calls and results alike", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(120) });
    const loop = { model: "m", messages: [{ role: "user", content: "q" }, { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: id, content: "r" }] };
    const sent = identity("chat").request(loop, target, opts("openai")).body as any;
    expect(sent.messages[1].tool_calls[0].id).toBe("call_abc");
    expect(sent.messages[2].tool_call_id).toBe("call_abc");
  });
});
