import { describe, expect, it } from "vitest";
import { Unsupported, upstreamProtocolOf, type Translator } from "../../core/contracts/translator.ts";
import type { ProviderDriver, Target } from "../../core/contracts/provider.ts";
import { nativeOnly } from "./responses-native-only.ts";
import { forcedBuiltIn } from "./responses-to-chat/tools.ts";
import { translators } from "./index.ts";

const target: Target = { modelId: "anthropic/claude", provider: "claude", upstreamModel: "c", pricing: {} };
const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: "anthropic", provider: "claude" };
const fn = { type: "function", name: "f", parameters: {} };

describe("responses: built-in tools on translated upstreams", () => {
  it("names a tool_choice that forces a built-in tool; offering one, or forcing a function, is fine", () => {
    expect(forcedBuiltIn({ tools: [fn, { type: "web_search" }] })).toBeUndefined();
    expect(forcedBuiltIn({ tools: [fn], tool_choice: "required" })).toBeUndefined();
    expect(forcedBuiltIn({ tools: [fn], tool_choice: { type: "file_search" } })).toEqual({ field: "tool_choice.type", value: "file_search" });
    expect(forcedBuiltIn({ tools: [fn], tool_choice: { type: "function", name: "f" } })).toBeUndefined();
    // allowed_tools forces only when its mode is required and it keeps no function.
    expect(forcedBuiltIn({ tools: [fn], tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "f" }, { type: "web_search" }] } })).toBeUndefined();
    expect(forcedBuiltIn({ tools: [fn], tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "web_search" }] } })).toBeUndefined();
    expect(forcedBuiltIn({ tools: [fn], tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "web_search" }] } })).toEqual({ field: "tool_choice.tools", value: "web_search" });
  });

  it("a translated pair throws Unsupported (a 400 naming the field) for a forced built-in; offered built-ins translate", () => {
    const inner: Translator = { native: false, request: () => ({ op: "chat", body: "ok", dropped: [], state: 1 }), response: (j) => j, stream: (e) => e, error: (e) => e };
    let thrown: unknown;
    try {
      nativeOnly(inner).request({ tools: [{ type: "code_interpreter" }], tool_choice: { type: "code_interpreter" } }, target, opts);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(Unsupported);
    expect((thrown as Unsupported).error).toMatchObject({ status: 400, code: "INVALID_REQUEST", details: { field: "tool_choice.type" } });
    expect((thrown as Unsupported).error.message).toContain("code_interpreter");
    expect(nativeOnly(inner).request({ input: "hi", tools: [{ type: "code_interpreter" }] }, target, opts).body).toBe("ok");
    // Every translated responses pair is guarded; the native one is the identity.
    for (const up of ["chat", "messages", "gemini", "converse"] as const) {
      expect(() => translators.responses[up]!.request({ model: "m", input: "hi", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } }, target, opts)).toThrow(Unsupported);
      const t = translators.responses[up]!.request({ model: "m", input: "hi", tools: [fn, { type: "file_search", vector_store_ids: ["vs_1"] }] }, target, opts);
      expect(t.dropped).toContain("tools[1].type=file_search");
    }
    const body = { model: "m", input: "hi", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" }, truncation: "auto" };
    expect(translators.responses.responses!.request(body, target, { ...opts, driverProtocol: "openai" })).toMatchObject({ op: "responses", body, dropped: [] });
  });

  it("a conversation or a stored prompt (state only OpenAI keeps) is Unsupported on every translated pair, kept by the native one", () => {
    for (const [extra, field] of [[{ conversation: "conv_1" }, "conversation"], [{ conversation: { id: "conv_1" } }, "conversation"], [{ prompt: { id: "pmpt_1" } }, "prompt"]] as const) {
      for (const up of ["chat", "messages", "gemini", "converse"] as const) {
        let thrown: unknown;
        try {
          translators.responses[up]!.request({ model: "m", input: [{ type: "function_call_output", call_id: "c1", output: "ok" }], ...extra }, target, opts);
        } catch (e) {
          thrown = e;
        }
        expect(thrown, `${up} ${field}`).toBeInstanceOf(Unsupported);
        expect((thrown as Unsupported).error).toMatchObject({ status: 400, details: { field } });
      }
      const body = { model: "m", input: "hi", ...extra };
      expect(translators.responses.responses!.request(body, target, { ...opts, driverProtocol: "openai" })).toMatchObject({ op: "responses", body });
    }
  });

  it("no input (optional in the SDK, for a stored prompt): Unsupported naming input on every translated pair, kept by the native one", () => {
    for (const up of ["chat", "messages", "gemini", "converse"] as const) {
      let thrown: unknown;
      try {
        translators.responses[up]!.request({ model: "m", instructions: "be brief" }, target, opts);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, up).toBeInstanceOf(Unsupported);
      expect((thrown as Unsupported).error).toMatchObject({ status: 400, details: { field: "input" } });
    }
    const body = { model: "m", prompt: { id: "pmpt_1" } };
    expect(translators.responses.responses!.request(body, target, { ...opts, driverProtocol: "openai" })).toMatchObject({ op: "responses", body });
  });

  it("input items only a native upstream understands: kept by the native pair, dropped and named by the translated ones", () => {
    const input = [
      { role: "user", content: "News?" },
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "news" } },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Here." }] },
      { role: "user", content: "More?" },
    ];
    const body = { model: "m", input };
    expect(translators.responses.responses!.request(body, target, opts).body).toBe(body);
    const t = translators.responses.chat!.request(body, target, { ...opts, driverProtocol: "openai" });
    expect((t.body as { messages: { role: string }[] }).messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(t.dropped).toEqual(["input[1].type=web_search_call"]);
  });

  it("upstreamProtocolOf: responses passes through only for a driver with the op and a native target", () => {
    const op = async () => ({ kind: "json" as const, body: {} });
    const openai: ProviderDriver = { name: "up", protocol: "openai", chat: op, responses: op };
    const native = { ...target, nativeResponses: true };
    expect(upstreamProtocolOf(openai, "responses", native)).toBe("responses");
    expect(upstreamProtocolOf(openai, "responses", target)).toBe("chat");
    expect(upstreamProtocolOf({ name: "az", protocol: "openai", chat: op }, "responses", native)).toBe("chat");
    expect(upstreamProtocolOf(openai, "chat", native)).toBe("chat");
  });
});
