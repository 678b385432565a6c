import { describe, expect, it } from "vitest";
import { chatToConverseRequest } from "./request.ts";
import { toolCallId } from "../chat-to-gemini/response.ts";
import { outputAsk } from "../../../core/metering/output-limit.ts";
import { responsesToConverse } from "../responses-to-converse/index.ts";
import { messagesToConverse } from "../messages-to-converse/index.ts";
import { geminiToConverse } from "../gemini-to-converse/index.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const llama: Target = { modelId: "meta/llama-3.3-70b", provider: "bedrock", upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0", pricing: { output: "0.00000072" } };
const claude: Target = { modelId: "anthropic/claude-sonnet-4.5", provider: "bedrock", upstreamModel: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { output: "0.000015" }, maxTokens: 64000 };

describe("chat -> Converse request", () => {
  it("system anywhere, text, images as bytes, inference config, dropped knobs", () => {
    const { body, dropped } = chatToConverseRequest({
      model: "x", max_tokens: 50, temperature: 0.2, top_p: 0.9, stop: "END", seed: 3, logprobs: true,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0K" } }] },
        { role: "developer", content: [{ type: "text", text: "Answer in French.", cache_control: { type: "ephemeral" } }] },
      ],
    }, llama);
    expect(body).toEqual({
      system: [{ text: "Be brief." }, { text: "Answer in French." }, { cachePoint: { type: "default" } }],
      messages: [{ role: "user", content: [{ text: "What is this?" }, { image: { format: "png", source: { bytes: "iVBORw0K" } } }] }],
      inferenceConfig: { maxTokens: 50, temperature: 0.2, topP: 0.9, stopSequences: ["END"] },
    });
    expect(dropped).toEqual(["logprobs", "seed"]);
  });

  it("a whitespace-only stop is left out and named for Claude (it refuses the request), sent to other families", () => {
    const hi = [{ role: "user", content: "hi" }];
    const toClaude = chatToConverseRequest({ messages: hi, stop: ["\n", "END"] }, claude);
    expect((toClaude.body.inferenceConfig as any).stopSequences).toEqual(["END"]);
    expect(toClaude.dropped).toEqual(["stop"]);
    const alone = chatToConverseRequest({ messages: hi, stop: "\n" }, claude);
    expect((alone.body.inferenceConfig as any)?.stopSequences).toBeUndefined();
    expect(alone.body.additionalModelResponseFieldPaths).toBeUndefined();
    const toLlama = chatToConverseRequest({ messages: hi, stop: "\n" }, llama);
    expect((toLlama.body.inferenceConfig as any).stopSequences).toEqual(["\n"]);
    expect(toLlama.dropped).toEqual([]);
  });

  it("a remote image URL is left to download before sending (Bedrock fetches nothing: url-media.ts); no URL is a 400 naming the field", () => {
    expect(chatToConverseRequest({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] }, llama).urls?.pending).toMatchObject([{ url: "https://x/y.png", field: "messages[0].content[0].image_url.url" }]);
    expect(() => chatToConverseRequest({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x/y.png" } }] }] }, llama))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "messages[0].content[0].image_url.url" }) }));
  });

  it("tools, tool_choice, a tool round trip: toolUse after text, consecutive tool messages in one user turn", () => {
    const tools = [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const { body } = chatToConverseRequest({
      tools, tool_choice: "required",
      messages: [
        { role: "user", content: "Weather in Paris and Tokyo?" },
        { role: "assistant", content: "Let me check.", tool_calls: [
          { id: "tooluse_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "tooluse_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } }] },
        { role: "tool", tool_call_id: "tooluse_a", content: "18C" },
        { role: "tool", tool_call_id: "tooluse_b", content: [{ type: "text", text: "25C" }] },
      ],
    }, llama) as any;
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: "get_weather", description: "Weather", inputSchema: { json: tools[0]!.function.parameters } } }], toolChoice: { any: {} } });
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(body.messages[1].content).toEqual([{ text: "Let me check." }, { toolUse: { toolUseId: "tooluse_a", name: "get_weather", input: { city: "Paris" } } }, { toolUse: { toolUseId: "tooluse_b", name: "get_weather", input: { city: "Tokyo" } } }]);
    expect(body.messages[2].content).toEqual([{ toolResult: { toolUseId: "tooluse_a", content: [{ text: "18C" }] } }, { toolResult: { toolUseId: "tooluse_b", content: [{ text: "25C" }] } }]);
    expect(chatToConverseRequest({ tools, tool_choice: { type: "function", function: { name: "get_weather" } }, messages: [{ role: "user", content: "x" }] }, llama).body.toolConfig).toMatchObject({ toolChoice: { tool: { name: "get_weather" } } });
  });

  it("a history with tool use but no tools offered still gets a toolConfig (Bedrock refuses it otherwise); `none` drops the tools", () => {
    const messages = [
      { role: "user", content: "x" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "lookup", arguments: "" } }] },
      { role: "tool", tool_call_id: "t1", content: "" },
    ];
    const { body } = chatToConverseRequest({ messages }, llama) as any;
    expect(body.toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(["lookup"]);
    expect(body.messages[1].content[0].toolUse.input).toEqual({});
    expect(body.messages[2].content[0].toolResult.content).toEqual([{ text: "(empty)" }]);
    expect(body.messages[2].content[0].toolResult.status).toBeUndefined();
    // A result a translator marked as failed (a Gemini client's functionResponse with only an error).
    const failed = chatToConverseRequest({ messages: [...messages.slice(0, 2), { role: "tool", tool_call_id: "t1", content: "Error: down", is_error: true }] }, llama) as any;
    expect(failed.body.messages[2].content[0].toolResult).toMatchObject({ content: [{ text: "Error: down" }], status: "error" });
    expect(chatToConverseRequest({ tools: [{ type: "function", function: { name: "f" } }], tool_choice: "none", messages: [{ role: "user", content: "x" }] }, llama).body.toolConfig).toBeUndefined();
  });

  it("invalid tool-call arguments are a 400", () => {
    expect(() => chatToConverseRequest({ messages: [{ role: "user", content: "x" }, { role: "assistant", tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{nope" } }] }] }, llama))
      .toThrow(expect.objectContaining({ status: 400 }));
  });

  it("reasoning on Claude: thinking in additionalModelRequestFields, no temperature, the budget below the client's max_tokens; signed reasoning replayed", () => {
    const { body, dropped } = chatToConverseRequest({
      reasoning_effort: "medium", temperature: 0.5, max_tokens: 5000,
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "y", reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "sig1", format: "anthropic-claude-v1", index: 0 }] },
        { role: "user", content: "z" },
      ],
    }, claude) as any;
    expect(body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 2048 } });
    expect(body.inferenceConfig).toEqual({ maxTokens: 5000 });
    expect(dropped).toEqual(["temperature"]);
    expect(body.messages[1].content).toEqual([{ reasoningContent: { reasoningText: { text: "hmm", signature: "sig1" } } }, { text: "y" }]);
    // Two answers' reasoning in one turn, each numbered from 0: two reasoning blocks, each with its own signature.
    const two = chatToConverseRequest({
      reasoning_effort: "medium", max_tokens: 5000,
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "y", reasoning_details: [
          { type: "reasoning.text", text: "first", signature: "sigA", format: "anthropic-claude-v1", index: 0 },
          { type: "reasoning.text", text: "second", signature: "sigB", format: "anthropic-claude-v1", index: 0 },
        ] },
        { role: "user", content: "z" },
      ],
    }, claude) as any;
    expect(two.body.messages[1].content).toEqual([
      { reasoningContent: { reasoningText: { text: "first", signature: "sigA" } } },
      { reasoningContent: { reasoningText: { text: "second", signature: "sigB" } } },
      { text: "y" },
    ]);
    // Other families have no thinking field: the knob is dropped and named.
    expect(chatToConverseRequest({ reasoning_effort: "high", messages: [{ role: "user", content: "x" }] }, llama).dropped).toEqual(["reasoning_effort"]);
    expect(chatToConverseRequest({ providerOptions: { bedrock: { thinkingBudget: 0.01 } }, messages: [{ role: "user", content: "x" }] }, llama).dropped).toEqual(["providerOptions.bedrock.thinkingBudget"]);
    const viaKnob = chatToConverseRequest({ providerOptions: { bedrock: { thinkingBudget: 0.03 } }, max_tokens: 3000, messages: [{ role: "user", content: "x" }] }, claude);
    expect([viaKnob.body.additionalModelRequestFields, viaKnob.dropped]).toEqual([{ thinking: { type: "enabled", budget_tokens: 2000 } }, []]);
  });

  it("Claude: the client's max_tokens is a cap thinking must fit under, and a forced tool wins over thinking; either way thinking is off and named", () => {
    const x = [{ role: "user", content: "x" }];
    // 1000 cannot hold Anthropic's 1024-token minimum budget: no thinking, the cap as sent, temperature kept.
    const small = chatToConverseRequest({ reasoning_effort: "medium", temperature: 0.5, max_tokens: 1000, messages: x }, claude) as any;
    expect(small.body.additionalModelRequestFields).toBeUndefined();
    expect(small.body.inferenceConfig).toEqual({ maxTokens: 1000, temperature: 0.5 });
    expect(small.dropped).toEqual(["reasoning_effort"]);
    const knob = chatToConverseRequest({ providerOptions: { bedrock: { thinkingBudget: 0.03 } }, max_tokens: 100, messages: x }, claude);
    expect([knob.body.additionalModelRequestFields, knob.dropped]).toEqual([undefined, ["providerOptions.bedrock.thinkingBudget"]]);
    // A forced tool: Anthropic refuses it with thinking; the force is kept.
    const tools = [{ type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } }];
    for (const tool_choice of ["required", { type: "function", function: { name: "get_time" } }]) {
      const forced = chatToConverseRequest({ reasoning_effort: "high", max_tokens: 8000, tools, tool_choice, messages: x }, claude) as any;
      expect(forced.body.additionalModelRequestFields).toBeUndefined();
      expect(forced.body.toolConfig.toolChoice).toEqual(tool_choice === "required" ? { any: {} } : { tool: { name: "get_time" } });
      expect(forced.body.inferenceConfig).toEqual({ maxTokens: 8000 });
      expect(forced.dropped).toEqual(["reasoning_effort"]);
    }
  });

  it("Claude: thinking turned off with no client limit still sends the limit the budget reserved (Converse would take the model's maximum)", () => {
    const tools = [{ type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } }];
    const body = { reasoning_effort: "low", tools, tool_choice: "required", messages: [{ role: "user", content: "x" }] };
    const { body: out, dropped } = chatToConverseRequest(body, claude) as any;
    expect(out.additionalModelRequestFields).toBeUndefined();
    expect(dropped).toEqual(["reasoning_effort"]);
    expect(out.inferenceConfig.maxTokens).toBe(outputAsk(body, "chat", "converse", claude).perChoice);
    expect(out.inferenceConfig.maxTokens).toBeLessThan(64000);
  });

  it("Claude: a tool loop whose assistant turn came back without its thinking turns thinking off (Anthropic refuses it), named", () => {
    const loop = [
      { role: "user", content: "time?" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "get_time", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "noon" },
    ];
    const off = chatToConverseRequest({ reasoning_effort: "low", max_tokens: 5000, messages: loop }, claude) as any;
    expect(off.body.additionalModelRequestFields).toBeUndefined();
    expect(off.body.inferenceConfig).toEqual({ maxTokens: 5000 });
    expect(off.dropped).toEqual(["reasoning_effort"]);
    // With its thinking replayed the loop keeps thinking.
    const replayed = [loop[0], { ...loop[1], reasoning_details: [{ type: "reasoning.text", text: "hmm", signature: "sig1", format: "anthropic-claude-v1", index: 0 }] }, loop[2]];
    expect((chatToConverseRequest({ reasoning_effort: "low", max_tokens: 5000, messages: replayed }, claude) as any).body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 1024 } });
  });

  it("tool ids a Gemini model made lose their signature (toolUseId is at most 64 characters), calls and results alike", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(200) });
    const messages = [
      { role: "user", content: "x" },
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: id, content: "r" },
    ];
    const { body } = chatToConverseRequest({ messages }, llama) as any;
    expect(body.messages[1].content[0].toolUse.toolUseId).toBe("call_abc");
    expect(body.messages[2].content[0].toolResult.toolUseId).toBe("call_abc");
  });

  it("prompt_cache_key has no place on Converse: named dropped; each client's chain names what it drops as that client sent it", () => {
    const x = [{ role: "user", content: "x" }];
    expect(chatToConverseRequest({ prompt_cache_key: "t-1", messages: x }, llama).dropped).toEqual(["prompt_cache_key"]);
    const opts = { cacheMarkers: true, cacheAuto: false, driverProtocol: "converse", provider: "bedrock" };
    const forced = { tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }], tool_choice: { type: "function", name: "f" } };
    expect(responsesToConverse.request({ model: "m", input: "x", reasoning: { effort: "low" }, ...forced }, claude, opts).dropped).toContain("reasoning.effort");
    const msgTools = [{ name: "f", input_schema: { type: "object", properties: {} } }];
    expect(messagesToConverse.request({ model: "m", max_tokens: 5000, thinking: { type: "enabled", budget_tokens: 2048 }, tools: msgTools, tool_choice: { type: "any" }, messages: [{ role: "user", content: "x" }] }, { ...claude, reasoning: true }, opts).dropped).toContain("thinking");
    const gem = { model: "m", contents: [{ role: "user", parts: [{ text: "x" }] }], tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "OBJECT", properties: {} } }] }], toolConfig: { functionCallingConfig: { mode: "ANY" } }, generationConfig: { maxOutputTokens: 5000, thinkingConfig: { thinkingBudget: 2048 } } };
    expect(geminiToConverse.request(gem, { ...claude, reasoning: true }, opts).dropped).toContain("generationConfig.thinkingConfig");
  });

  it("Claude with thinking gets no temperature or top_p, whatever their values (the newest models refuse them together): dropped and named", () => {
    const x = [{ role: "user", content: "x" }];
    const defaults = chatToConverseRequest({ reasoning_effort: "low", max_tokens: 5000, temperature: 1, top_p: 1, messages: x }, claude) as any;
    expect(defaults.body.inferenceConfig).toEqual({ maxTokens: 5000 });
    expect(defaults.dropped).toEqual(["temperature", "top_p"]);
    const gone = chatToConverseRequest({ reasoning_effort: "low", max_tokens: 5000, temperature: 0.2, top_p: 0.5, messages: x }, claude) as any;
    expect(gone.body.inferenceConfig).toEqual({ maxTokens: 5000 });
    expect(gone.dropped).toEqual(["temperature", "top_p"]);
  });
});

describe("chat -> Converse: an assistant turn that was a refusal", () => {
  it("its refusal part (or refusal field with no content) goes as the assistant turn's text, not dropped", () => {
    const refusal = "I can't help with that.";
    for (const assistant of [{ role: "assistant", content: [{ type: "refusal", refusal }] }, { role: "assistant", content: null, refusal }]) {
      const { body } = chatToConverseRequest({ model: "x", messages: [{ role: "user", content: "x" }, assistant, { role: "user", content: "why?" }] }, llama);
      expect((body as any).messages).toEqual([
        { role: "user", content: [{ text: "x" }] },
        { role: "assistant", content: [{ text: refusal }] },
        { role: "user", content: [{ text: "why?" }] },
      ]);
    }
  });
});
