import { describe, expect, it } from "vitest";
import { messagesToChatFor } from "./index.ts";
import { messagesToChatRequest } from "./request.ts";
import { chatToMessagesResponse } from "./response.ts";
import { ChatToMessagesStream } from "./stream.ts";
import { withoutGatewayThinking, type ThinkingScope } from "./reasoning.ts";
import { messagesToGemini } from "../messages-to-gemini/index.ts";
import { messagesToConverse } from "../messages-to-converse/index.ts";
import { decodeReasoning, encodeReasoning } from "../responses-to-chat/reasoning.ts";
import { replayedText } from "../replayed-reasoning-text.ts";
import { outputAsk } from "../../../core/metering/output-limit.ts";

const thinker = { modelId: "g/m", provider: "groq", upstreamModel: "openai/gpt-oss-120b", pricing: { output: "0.000001" }, reasoning: true } as any;
const plain = { ...thinker, reasoning: undefined };
const gemini = { modelId: "g/gem", provider: "gem", upstreamModel: "gemini-2.5-flash", pricing: { output: "0.0000025" }, reasoning: true } as any;
const opts = (provider: string, driverProtocol = "openai") => ({ cacheMarkers: false, cacheAuto: false, driverProtocol, provider });
const chatScope: ThinkingScope = { flavor: "chat", provider: "groq" };
const q = [{ role: "user", content: "q" }];

describe("Messages thinking asked of a translated upstream", () => {
  it("a budget becomes reasoning_effort rounded up to an effort (at most high on chat); adaptive takes output_config.effort", () => {
    const ask = (body: any, target = thinker) => messagesToChatRequest({ model: "m", max_tokens: 9000, messages: q, ...body }, { target, scope: chatScope });
    expect(ask({ thinking: { type: "enabled", budget_tokens: 2000 } })).toMatchObject({ body: { reasoning_effort: "medium" }, dropped: [] });
    expect(ask({ thinking: { type: "enabled", budget_tokens: 1024 } }).body.reasoning_effort).toBe("low");
    expect(ask({ thinking: { type: "enabled", budget_tokens: 30000 } }).body.reasoning_effort).toBe("high");
    // Claude Code on a model it does not know: adaptive thinking at the effort it chose.
    expect(ask({ thinking: { type: "adaptive" }, output_config: { effort: "low" } })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: [] });
    expect(ask({ thinking: { type: "adaptive" }, output_config: { effort: "max" } }).body.reasoning_effort).toBe("high");
    expect(ask({ thinking: { type: "adaptive" } }).body.reasoning_effort).toBe("medium");
    // Beside a budget output_config.effort has no place; display "omitted" is not honoured (the text is what replays).
    expect(ask({ thinking: { type: "enabled", budget_tokens: 2000, display: "omitted" }, output_config: { effort: "low" } }).dropped).toEqual(["thinking.display", "output_config.effort"]);
    // gpt-oss reasons at medium when asked nothing and cannot stop: off is its least effort, named.
    expect(ask({ thinking: { type: "disabled" } })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["thinking"] });
  });

  it("on a model that cannot think, a budget with display omitted is named once, as thinking", () => {
    const gpt41 = { modelId: "openai/gpt-4.1", provider: "openai", upstreamModel: "gpt-4.1", pricing: {}, reasoning: false } as any;
    const t = messagesToChatRequest({ model: "m", max_tokens: 9000, messages: q, thinking: { type: "enabled", budget_tokens: 2000, display: "omitted" } }, { target: gpt41, scope: { flavor: "chat", provider: "openai" } });
    expect(t.dropped).toEqual(["thinking"]);
  });

  it("thinking disabled on an OpenAI reasoning model (which reasons at medium when asked nothing): its least effort, named unless it is off", () => {
    const openai = (upstreamModel: string) => ({ modelId: "openai/x", provider: "openai", upstreamModel, pricing: {}, reasoning: true }) as any;
    const off = (target: any) => messagesToChatRequest({ model: "m", max_tokens: 9000, messages: q, thinking: { type: "disabled" } }, { target, scope: { flavor: "chat", provider: "openai" } });
    expect(off(openai("gpt-5"))).toMatchObject({ body: { reasoning_effort: "minimal" }, dropped: ["thinking"] });
    expect(off(openai("o3"))).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["thinking"] });
    expect(off(openai("gpt-5.1"))).toMatchObject({ body: { reasoning_effort: "none" }, dropped: [] });
    // A model the gateway knows nothing of gets nothing for it.
    expect(off({ ...thinker, upstreamModel: "qwen3-32b" }).body).not.toHaveProperty("reasoning_effort");
  });

  it("thinking disabled on other hosts' reasoning models: DeepSeek's own off, else the least effort they take, named", () => {
    const off = (provider: string, upstreamModel: string) =>
      messagesToChatRequest({ model: "m", max_tokens: 9000, messages: q, thinking: { type: "disabled" } }, { target: { ...thinker, provider, upstreamModel }, scope: { flavor: "chat", provider } });
    const deepseek = off("deepseek", "deepseek-flash");
    expect(deepseek).toMatchObject({ body: { thinking: { type: "disabled" } }, dropped: [] });
    expect(deepseek.body).not.toHaveProperty("reasoning_effort");
    expect(off("groq", "openai/gpt-oss-120b")).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["thinking"] });
    expect(off("xai", "grok-3-mini")).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["thinking"] });
  });

  it("an effort the chat model does not take is the nearest that costs no more, named (grok-3-mini: low or high)", () => {
    const grok = { ...thinker, provider: "xai", upstreamModel: "grok-3-mini" };
    const ask = (body: any) => messagesToChatRequest({ model: "m", max_tokens: 9000, messages: q, ...body }, { target: grok, scope: { flavor: "chat", provider: "xai" } });
    expect(ask({ thinking: { type: "enabled", budget_tokens: 2048 } })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["thinking"] });
    expect(ask({ thinking: { type: "adaptive" }, output_config: { effort: "max" } })).toMatchObject({ body: { reasoning_effort: "high" }, dropped: [] });
    expect(ask({ thinking: { type: "enabled", budget_tokens: 4096 } })).toMatchObject({ body: { reasoning_effort: "high" }, dropped: [] });
  });

  it("thinking disabled on Gemini 2.5 (Flash thinks when asked nothing): budget 0, or 2.5 Pro's least budget, named", () => {
    const body = { model: "g/gem", max_tokens: 1000, messages: q, thinking: { type: "disabled" } };
    const flash = messagesToGemini.request(body, gemini, opts("gem", "gemini"));
    expect((flash.body as any).generationConfig).toEqual({ maxOutputTokens: 1000, thinkingConfig: { thinkingBudget: 0 } });
    expect(flash.dropped).toEqual([]);
    const pro = { ...gemini, upstreamModel: "gemini-2.5-pro" };
    const p = messagesToGemini.request(body, pro, opts("gem", "gemini"));
    expect((p.body as any).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(p.dropped).toEqual(["thinking"]);
    // The budget reserves what is sent.
    expect(outputAsk(body, "messages", "gemini", pro)).toMatchObject({ thinking: 128, perChoice: 1000 + 128 });
    // A model that cannot think is sent no thinkingConfig.
    expect((messagesToGemini.request(body, { ...gemini, reasoning: false }, opts("gem", "gemini")).body as any).generationConfig.thinkingConfig).toBeUndefined();
  });

  it("on a model that cannot think, or without a target (token counting), thinking is dropped and named", () => {
    const body = { model: "m", max_tokens: 9000, messages: q, thinking: { type: "adaptive" }, output_config: { effort: "high" } };
    for (const t of [messagesToChatRequest(body, { target: plain, scope: chatScope }), messagesToChatRequest(body)]) {
      expect(t.dropped).toEqual(["thinking", "output_config.effort"]);
      expect(t.body).not.toHaveProperty("reasoning_effort");
    }
  });

  it("Gemini: thinkingBudget as the budget reserves it, with the thought text asked for", () => {
    const body = { model: "g/gem", max_tokens: 5000, messages: q, thinking: { type: "enabled", budget_tokens: 3000 } };
    const t = messagesToGemini.request(body, gemini, opts("gem", "gemini"));
    const tc = (t.body as any).generationConfig.thinkingConfig;
    expect(tc).toEqual({ thinkingBudget: 4096, includeThoughts: true });
    expect(outputAsk(body, "messages", "gemini", gemini)).toMatchObject({ thinking: 4096, perChoice: 5000 + 4096 });
    // A model that cannot think gets no thinkingConfig, and the budget reserves none.
    const off = messagesToGemini.request(body, { ...gemini, reasoning: false }, opts("gem", "gemini"));
    expect((off.body as any).generationConfig.thinkingConfig).toBeUndefined();
    expect(off.dropped).toEqual(["thinking"]);
    expect(outputAsk(body, "messages", "gemini", { ...gemini, reasoning: false }).thinking).toBeUndefined();
  });

  it("Bedrock Converse: Claude thinks with a budget as reserved; another family's thinking is dropped and named", () => {
    const claude = { modelId: "a/c", provider: "aws", upstreamModel: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { output: "0.000015" }, reasoning: true } as any;
    const body = { model: "a/c", max_tokens: 9000, messages: q, thinking: { type: "enabled", budget_tokens: 2000 } };
    const t = messagesToConverse.request(body, claude, opts("aws", "bedrock"));
    expect((t.body as any).additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(outputAsk(body, "messages", "converse", claude).thinking).toBe(2048);
    const llama = { ...claude, upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0" };
    const l = messagesToConverse.request(body, llama, opts("aws", "bedrock"));
    expect(l.dropped).toEqual(["thinking"]);
    expect((l.body as any).additionalModelRequestFields).toBeUndefined();
  });
});

describe("the upstream's reasoning comes back as thinking blocks and is replayed to the upstream that made it", () => {
  const call = { id: "call_1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } };

  it("JSON: plain reasoning text (Groq's `reasoning`) -> a thinking block signed with what a replay needs", () => {
    const msg: any = chatToMessagesResponse({ id: "x", model: "m", choices: [{ message: { role: "assistant", content: null, reasoning: "Let me think.", tool_calls: [call] }, finish_reason: "tool_calls" }] }, chatScope);
    expect(msg.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use"]);
    expect(msg.content[0].thinking).toBe("Let me think.");
    expect(decodeReasoning(msg.content[0].signature)).toEqual({ p: "chat", n: "groq", d: [], t: "reasoning" });
  });

  it("JSON: OpenRouter's reasoning_details (encrypted, no text) -> a thinking block without text, its signature holding them", () => {
    const details = [{ type: "reasoning.encrypted", data: "gAAAA", format: "openai-responses-v1", id: "rs_1", index: 0 }];
    const msg: any = chatToMessagesResponse({ choices: [{ message: { content: "hi", reasoning_details: details }, finish_reason: "stop" }] }, { flavor: "chat", provider: "openrouter" });
    expect(msg.content).toEqual([{ type: "thinking", thinking: "", signature: expect.stringMatching(/^mgr1\./) }, { type: "text", text: "hi", citations: null }]);
    expect(decodeReasoning(msg.content[0].signature)).toEqual({ p: "chat", n: "openrouter", d: details });
  });

  it("stream: thinking_delta per reasoning piece, then the signature_delta just before the block stops", () => {
    const t = new ChatToMessagesStream({ provider: "groq", scope: chatScope });
    const chunk = (delta: unknown, finish: string | null = null) => ({ data: JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const out = [chunk({ role: "assistant", reasoning: "Let " }), chunk({ reasoning: "me think." }), chunk({ content: "Hi" }), chunk({}, "stop"), { data: "[DONE]" }]
      .flatMap((e) => t.push(e)).map((e) => JSON.parse(e.data));
    const block = out.filter((e) => e.index === 0).map((e) => e.type === "content_block_delta" ? e.delta.type : e.type);
    expect(block).toEqual(["content_block_start", "thinking_delta", "thinking_delta", "signature_delta", "content_block_stop"]);
    expect(out.find((e) => e.type === "content_block_start").content_block).toEqual({ type: "thinking", thinking: "", signature: "" });
    expect(decodeReasoning(out.find((e) => e.delta?.type === "signature_delta").delta.signature)).toEqual({ p: "chat", n: "groq", d: [], t: "reasoning" });
  });

  it("stream: reasoning_details pieces (OpenRouter) gather into the block's signature; DeepSeek's reasoning_content is named as such", () => {
    const t = new ChatToMessagesStream({ provider: "or", scope: { flavor: "chat", provider: "or" } });
    const chunk = (delta: unknown, finish: string | null = null) => ({ data: JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] }) });
    const d1 = { type: "reasoning.text", text: "Hm", index: 0, format: "anthropic-claude-v1" };
    const d2 = { type: "reasoning.text", text: "m.", signature: "sig", index: 0, format: "anthropic-claude-v1" };
    const out = [chunk({ reasoning_content: "Hm", reasoning_details: [d1] }), chunk({ reasoning_content: "m.", reasoning_details: [d2] }), chunk({ content: "ok" }, "stop"), { data: "[DONE]" }]
      .flatMap((e) => t.push(e)).map((e) => JSON.parse(e.data));
    expect(decodeReasoning(out.find((e) => e.delta?.type === "signature_delta").delta.signature)).toEqual({ p: "chat", n: "or", d: [d1, d2], t: "reasoning_content" });
  });

  it("replayed: the next turn's thinking block gives its turn back the reasoning, to that provider only, its text for the driver to place as the host takes it", () => {
    const sig = (provider: string, t?: string, d: unknown[] = []) => encodeReasoning("chat", d, provider, t);
    const turn = (signature: string) => ({
      model: "m", max_tokens: 100, thinking: { type: "adaptive" }, output_config: { effort: "high" },
      messages: [...q, { role: "assistant", content: [{ type: "thinking", thinking: "Let me think.", signature }, { type: "tool_use", id: "call_1", name: "f", input: { a: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "r" }] }],
    });
    const assistant = (body: any, target = thinker, provider = "groq") => (messagesToChatFor("chat").request(body, target, opts(provider)).body as any).messages[1];
    // No field of its own: a host the gateway does not know gets none its client never sent (openai-compatible/reasoning-fields.ts).
    const same = assistant(turn(sig("groq", "reasoning")));
    expect(replayedText(same)).toBe("Let me think.");
    expect(JSON.parse(JSON.stringify(same))).toEqual({ role: "assistant", content: null, tool_calls: [call] });
    const details = [{ type: "reasoning.encrypted", data: "gAAAA", format: "openai-responses-v1", index: 0 }];
    const withDetails = assistant(turn(sig("groq", "reasoning_content", details)));
    expect(withDetails).toEqual({ role: "assistant", content: null, tool_calls: [call], reasoning_details: details });
    expect(replayedText(withDetails)).toBe("Let me think.");
    // Another provider's blob, Anthropic's own signature, another protocol's blob, a model that cannot think: nothing.
    for (const other of [assistant(turn(sig("deepseek", "reasoning"))), assistant(turn("EqQBCkgIARABGAIiQL")), assistant(turn(encodeReasoning("gemini", []))), assistant(turn(sig("groq", "reasoning")), plain)]) {
      expect(other).toEqual({ role: "assistant", content: null, tool_calls: [call] });
      expect(replayedText(other)).toBeUndefined();
    }
  });

  it("a whole Gemini tool loop: thought text comes back as thinking, the call's thought signature rides in its id, and returns", () => {
    const call0 = { functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "CiQB+/8BAgP+EA==" };
    const t1 = messagesToGemini.request({ model: "g/gem", max_tokens: 100, messages: q, thinking: { type: "adaptive" }, tools: [{ name: "f", input_schema: { type: "object" } }] }, gemini, opts("gem", "gemini"));
    const answer: any = messagesToGemini.response({ candidates: [{ content: { role: "model", parts: [{ text: "Hmm.", thought: true }, call0] }, finishReason: "STOP" }] }, t1.state, { reportUsage() {} } as any);
    expect(answer.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use"]);
    expect(answer.content[0]).toMatchObject({ thinking: "Hmm." });
    expect(decodeReasoning(answer.content[0].signature)).toEqual({ p: "gemini", d: [] });
    const t2 = messagesToGemini.request({
      model: "g/gem", max_tokens: 100, thinking: { type: "adaptive" }, tools: [{ name: "f", input_schema: { type: "object" } }],
      messages: [...q, { role: "assistant", content: answer.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: answer.content[1].id, content: "r" }] }],
    }, gemini, opts("gem", "gemini"));
    expect((t2.body as any).contents[1]).toEqual({ role: "model", parts: [call0] });
  });
});

describe("a native Messages upstream never gets the gateway's thinking blocks", () => {
  const ours = { type: "thinking", thinking: "t", signature: encodeReasoning("chat", [], "groq", "reasoning") };
  const claudes = { type: "thinking", thinking: "c", signature: "EqQBCkgIARABGAIiQL" };
  const use = { type: "tool_use", id: "t1", name: "f", input: {} };
  const result = { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] };

  it("blob-signed and unsigned thinking blocks are dropped; Claude's own stay; a body without them is the same body", () => {
    const body = { model: "m", messages: [...q, { role: "assistant", content: [ours, { type: "text", text: "a" }] }, { role: "user", content: "next" }, { role: "assistant", content: [claudes, use] }, result], thinking: { type: "enabled", budget_tokens: 1024 } };
    const t = withoutGatewayThinking(body);
    expect(t.dropped).toEqual(["messages[1].content[0]"]);
    expect(t.body.messages[1].content).toEqual([{ type: "text", text: "a" }]);
    expect(t.body.messages[3].content).toEqual([claudes, use]);
    expect(t.body.thinking).toEqual(body.thinking);
    const native = { model: "m", messages: [...q, { role: "assistant", content: [claudes, use] }, result] };
    expect(withoutGatewayThinking(native).body).toBe(native);
  });

  it("a tool loop whose turn loses its only thinking continues with thinking off (Anthropic wants it first), named", () => {
    const unsigned = { type: "thinking", thinking: "x", signature: "" };
    const body = { model: "m", messages: [...q, { role: "assistant", content: [ours, unsigned, use] }, result], thinking: { type: "adaptive" } };
    const t = withoutGatewayThinking(body);
    expect(t.body.messages[1].content).toEqual([use]);
    expect(t.body.thinking).toEqual({ type: "disabled" });
    expect(t.dropped).toEqual(["messages[1].content[0]", "messages[1].content[1]", "thinking"]);
  });
});
