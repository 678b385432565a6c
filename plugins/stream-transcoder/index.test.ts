import { describe, expect, it } from "vitest";
import { invokeTranslated, DROPPED_HEADER } from "./index.ts";
import type { CallOptions, ProviderDriver, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { translators } from "../../providers/translate/index.ts";

const target: Target = { modelId: "m/x", provider: "p", upstreamModel: "x", pricing: { output: "0.00001" } };
const call = { signal: new AbortController().signal, requestId: "r", clientHeaders: {}, reportUsage() {}, reportFirstToken() {} } as CallOptions;

function ctxFor(body: any, extra: Record<string, unknown> = {}) {
  return { body, responseHeaders: {} as Record<string, string>, config: { server: {} }, ...extra } as any;
}

async function* events(list: string[]) { for (const data of list) yield { data }; }

describe("stream-transcoder invoke", () => {
  it("messages op on a chat driver: body translated, JSON answer translated back, dropped knobs merged with the driver's", async () => {
    let seen: any;
    const driver: ProviderDriver = {
      name: "p", protocol: "gemini",
      chat: async (b): Promise<ProviderResult> => {
        seen = b;
        return { kind: "json", headers: { [DROPPED_HEADER]: "logit_bias" }, body: { id: "chatcmpl-1", model: "x", choices: [{ message: { content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } } };
      },
    };
    const ctx = ctxFor({ model: "m/x", max_tokens: 5, thinking: { type: "enabled", budget_tokens: 2000 }, messages: [{ role: "user", content: "q" }] });
    const r = await invokeTranslated(ctx, translators, driver, "messages", target, call)!;
    expect(seen.messages).toEqual([{ role: "user", content: "q" }]);
    expect(r.kind === "json" && r.body).toMatchObject({ type: "message", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn" });
    expect(r.headers![DROPPED_HEADER]).toBe("thinking,logit_bias");
  });

  it("chat op on a messages driver streams back chat chunks; native ops are called with the body untouched", async () => {
    const ev = (type: string, p: Record<string, unknown> = {}) => JSON.stringify({ type, ...p });
    const driver: any = {
      name: "p", protocol: "anthropic",
      messages: async (b: any): Promise<ProviderResult> => ({ kind: "stream", events: (async function* () {
        for (const [event, data] of [
          ["message_start", ev("message_start", { message: { id: "msg_1", model: b.model, usage: { input_tokens: 2 } } })],
          ["content_block_start", ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } })],
          ["content_block_delta", ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "yo" } })],
          ["message_delta", ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } })],
          ["message_stop", ev("message_stop")],
        ]) yield { event, data };
      })() }),
    };
    const ctx = ctxFor({ model: "m/x", stream: true, messages: [{ role: "user", content: "q" }] });
    const r = await invokeTranslated(ctx, translators, driver, "chat", target, call)!;
    const out: string[] = [];
    if (r.kind === "stream") for await (const e of r.events) out.push(e.data);
    expect(out.at(-1)).toBe("[DONE]");
    expect(out.slice(0, -1).map((d) => JSON.parse(d).choices[0].delta)).toEqual([{ role: "assistant", content: "" }, { content: "yo" }, {}]);

    const native = { name: "o", protocol: "openai", chat: async (b: any) => ({ kind: "stream", events: events([JSON.stringify(b)]) }) } as unknown as ProviderDriver;
    const body = { model: "m/x", messages: [{ role: "user", content: "q" }] };
    const n = await invokeTranslated(ctxFor(body), translators, native, "chat", target, call)!;
    if (n.kind === "stream") for await (const e of n.events) expect(JSON.parse(e.data)).toEqual(body);
  });

  it("a decoded answer a translator trips over (JSON null from a messages driver, for chat) is a retryable 502 invalid_answer, not a 500", async () => {
    const driver = { name: "p", protocol: "anthropic", messages: async (): Promise<ProviderResult> => ({ kind: "json", body: null }) } as unknown as ProviderDriver;
    const err = await invokeTranslated(ctxFor({ model: "m/x", messages: [{ role: "user", content: "q" }] }), translators, driver, "chat", target, call)!.then(() => undefined, (e) => e);
    expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "p", reason: "invalid_answer" } });
  });

  it("a translated body goes out without the client's headers; a native one keeps them", async () => {
    const withHeaders = { ...call, clientHeaders: { "anthropic-beta": "x" } };
    const seen: Record<string, unknown>[] = [];
    const json = (body: unknown) => async (_b: unknown, _t: Target, c: CallOptions): Promise<ProviderResult> => {
      seen.push(c.clientHeaders);
      return { kind: "json", body };
    };
    const driver = { name: "a", protocol: "anthropic", messages: json({ type: "message", content: [], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } }) } as ProviderDriver;
    await invokeTranslated(ctxFor({ model: "m/x", messages: [{ role: "user", content: "q" }] }), translators, driver, "chat", target, withHeaders);
    await invokeTranslated(ctxFor({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: "q" }] }), translators, driver, "messages", target, withHeaders);
    expect(seen).toEqual([{}, { "anthropic-beta": "x" }]);
  });

  it("returns undefined when neither protocol fits (dispatch then reports the unsupported op)", () => {
    expect(invokeTranslated(ctxFor({}), translators, { name: "r", protocol: "cohere" }, "messages", target, call)).toBeUndefined();
  });

  it("chat -> Anthropic with a tool loop that lost its thinking: recalled from the project's memos, bounded in time", async () => {
    const detail = { type: "reasoning.text", text: "T", signature: "S", format: "anthropic-claude-v1", index: 0 };
    let seen: any;
    const driver: any = {
      name: "p", protocol: "anthropic",
      messages: async (b: any): Promise<ProviderResult> => {
        seen = b;
        return { kind: "json", body: { id: "m", model: "x", stop_reason: "end_turn", usage: {}, content: [{ type: "text", text: "ok" }] } };
      },
    };
    const body = {
      model: "m/x", reasoning_effort: "low",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: null, tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "toolu_1", content: "r" },
      ],
    };
    const asked: string[][] = [];
    const warned: string[] = [];
    const gateway = (get: (keys: string[]) => Promise<Map<string, string>>) => ({
      store: { memos: { get: (keys: string[]) => { asked.push(keys); return get(keys); }, put: async () => {} } },
      log: { warn: (m: string) => warned.push(m) },
    });
    const found = ctxFor(body, { auth: { projectId: "acme" }, requestId: "r1", gateway: gateway(async (keys) => new Map([[keys[0]!, JSON.stringify([detail])]])) });
    await invokeTranslated(found, translators, driver, "chat", target, call)!;
    expect(asked).toEqual([["translate:acme:toolu_1"]]);
    expect(seen.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(seen.messages[1].content[0]).toEqual({ type: "thinking", thinking: "T", signature: "S" });

    // A store that never answers: the request goes on after the bound (this would time out otherwise), thinking off
    // and named.
    const hung = ctxFor(body, { auth: { projectId: "acme" }, requestId: "r2", gateway: gateway(() => new Promise(() => {})) });
    const r = await invokeTranslated(hung, translators, driver, "chat", target, call)!;
    expect(seen.thinking).toBeUndefined();
    expect(r.headers![DROPPED_HEADER]).toBe("reasoning_effort");
    expect(warned).toEqual([expect.stringContaining("not read in time")]);
    // A store that fails: the same, logged.
    const failing = ctxFor(body, { auth: { projectId: "acme" }, requestId: "r3", gateway: gateway(async () => { throw new Error("redis down"); }) });
    await invokeTranslated(failing, translators, driver, "chat", target, call)!;
    expect(seen.thinking).toBeUndefined();
    expect(warned).toHaveLength(2);
  });

  it("a translated client's limit above the endpoint's maximum goes out at that maximum, named; a native one as sent", async () => {
    let seen: any;
    const answer = { id: "chatcmpl-1", model: "x", choices: [{ message: { content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } };
    const driver = { name: "p", protocol: "openai", chat: async (b: any): Promise<ProviderResult> => ((seen = b), { kind: "json", body: answer }) } as ProviderDriver;
    const gpt4o = { ...target, maxTokens: 16384 };
    const claudeCode = { model: "m/x", max_tokens: 32000, messages: [{ role: "user", content: "q" }] };
    const r = await invokeTranslated(ctxFor(claudeCode), translators, driver, "messages", gpt4o, call)!;
    expect(seen.max_tokens).toBe(16384);
    expect(r.headers?.[DROPPED_HEADER]).toBe("max_tokens");
    const gemini = { model: "m/x", contents: [{ role: "user", parts: [{ text: "q" }] }], generationConfig: { maxOutputTokens: 32000 } };
    const g = await invokeTranslated(ctxFor(gemini), translators, driver, "gemini", gpt4o, call)!;
    expect(seen.max_tokens).toBe(16384);
    expect(g.headers?.[DROPPED_HEADER]).toBe("generationConfig.maxOutputTokens");
    // Within the maximum: as sent, nothing named; a chat client on a chat model passes through untouched.
    await invokeTranslated(ctxFor({ ...claudeCode, max_tokens: 16384 }), translators, driver, "messages", gpt4o, call);
    expect(seen.max_tokens).toBe(16384);
    const n = await invokeTranslated(ctxFor({ model: "m/x", max_tokens: 32000, messages: [{ role: "user", content: "q" }] }), translators, driver, "chat", gpt4o, call)!;
    expect(seen.max_tokens).toBe(32000);
    expect(n.headers?.[DROPPED_HEADER]).toBeUndefined();
  });
});
