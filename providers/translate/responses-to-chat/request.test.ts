import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../core/errors.ts";
import { responsesToChatRequest } from "./request.ts";
import { responsesToChat } from "./index.ts";
import { encodeReasoning } from "./reasoning.ts";
import { replayedText } from "../replayed-reasoning-text.ts";
import { toolCallId } from "../chat-to-gemini/response.ts";

describe("responses request -> chat", () => {
  it("instructions, items, tools, format and knobs map; a turn's assistant items are one message; what chat cannot carry is reported", () => {
    const { body, dropped } = responsesToChatRequest({
      model: "m", instructions: "Be brief.", max_output_tokens: 50, temperature: 0.2, stream: true, store: true, metadata: { a: "b" },
      reasoning: { effort: "low", summary: "auto" }, include: ["reasoning.encrypted_content", "message.output_text.logprobs"], tool_choice: { type: "function", name: "f" }, parallel_tool_calls: false, unknown_field: 1,
      tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: true }],
      text: { format: { type: "json_schema", name: "s", schema: { type: "object" }, strict: true }, verbosity: "low" },
      input: [
        { role: "developer", content: "dev" },
        { role: "user", content: [{ type: "input_text", text: "look" }, { type: "input_image", image_url: "https://x/y.png", detail: "low" }] },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hm" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "calling" }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "f", arguments: "{\"x\":1}" },
        { type: "function_call_output", call_id: "c1", output: "one" },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "tw" }, { type: "input_text", text: "o" }] },
      ],
    });
    expect(body).toEqual({
      model: "m", max_completion_tokens: 50, temperature: 0.2, parallel_tool_calls: false, reasoning_effort: "low", verbosity: "low", logprobs: true,
      stream: true, stream_options: { include_usage: true },
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" }, strict: true } }],
      tool_choice: { type: "function", function: { name: "f" } },
      response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object" }, strict: true } },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "system", content: "dev" },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "https://x/y.png", detail: "low" } }] },
        { role: "assistant", content: "calling", tool_calls: [
          { id: "c1", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "f", arguments: "{\"x\":1}" } },
        ] },
        { role: "tool", tool_call_id: "c1", content: "one" },
        { role: "tool", tool_call_id: "c2", content: "two" },
      ],
    });
    expect(dropped).toEqual(["reasoning.summary", "metadata"]);
  });

  it("safety_identifier (or the deprecated user) is chat's user", () => {
    expect(responsesToChatRequest({ model: "m", input: "Hi", safety_identifier: "u1", user: "old" }).body.user).toBe("u1");
    expect(responsesToChatRequest({ model: "m", input: "Hi", user: "old" }).body.user).toBe("old");
  });

  it("a built-in tool's item sent back is dropped and reported", () => {
    const r = responsesToChatRequest({ model: "m", input: [{ role: "user", content: "Hi" }, { type: "web_search_call", id: "ws_1", status: "completed" }] });
    expect(r.body.messages).toEqual([{ role: "user", content: "Hi" }]);
    expect(r.dropped).toEqual(["input[1].type=web_search_call"]);
  });

  it("an empty assistant message keeps content \"\" (chat wants content or tool_calls)", () => {
    const { body } = responsesToChatRequest({ model: "m", input: [{ role: "user", content: "Hi" }, { type: "message", role: "assistant", content: [{ type: "output_text", text: "" }] }, { role: "user", content: "?" }] });
    expect((body.messages as any[])[1]).toEqual({ role: "assistant", content: "" });
  });

  it("an assistant message's refusal part (the model refused that turn) is the turn's text, so every upstream sees it", () => {
    const refused = { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "I can't help with that." }] };
    const { body } = responsesToChatRequest({ model: "m", input: [{ role: "user", content: "Do it" }, refused, { role: "user", content: "Why?" }] });
    expect((body.messages as any[])[1]).toEqual({ role: "assistant", content: "I can't help with that." });
    const mixed = { type: "message", role: "assistant", content: [{ type: "output_text", text: "Partly. " }, { type: "refusal", refusal: "Not the rest." }] };
    expect((responsesToChatRequest({ model: "m", input: [{ role: "user", content: "Do it" }, mixed] }).body.messages as any[])[1].content).toBe("Partly. Not the rest.");
  });

  it("logprobs (include or top_logprobs) go to chat upstreams, are dropped and reported for Anthropic and Gemini", () => {
    const body = { model: "m", input: "Hi", top_logprobs: 2, include: ["message.output_text.logprobs", "file_search_call.results"] };
    const chat = responsesToChatRequest(body);
    expect(chat.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(chat.dropped).toEqual(["include.file_search_call.results"]);
    const claude = responsesToChatRequest(body, { flavor: "messages" });
    expect(claude.body.logprobs).toBeUndefined();
    expect(claude.dropped).toEqual(["top_logprobs", "include.file_search_call.results"]);
  });

  it("a string input is one user message", () => {
    expect(responsesToChatRequest({ model: "m", input: "Hi" }).body).toEqual({ model: "m", messages: [{ role: "user", content: "Hi" }] });
  });
});

describe("reasoning items sent back", () => {
  const thinking = { type: "reasoning.text", text: "hmm", signature: "sig1", format: "anthropic-claude-v1", index: 0 };
  const redacted = { type: "reasoning.encrypted", data: "opaque", format: "anthropic-claude-v1", index: 1 };
  const loop = (enc: string | undefined, first: "reasoning" | "message" = "reasoning") => {
    const rs = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hmm" }], encrypted_content: enc };
    const msg = { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] };
    return [
      { role: "user", content: "Weather?" },
      ...(first === "reasoning" ? [rs, msg] : [msg, rs]),
      { type: "function_call", call_id: "toolu_1", name: "w", arguments: "{}" },
      { type: "function_call_output", call_id: "toolu_1", output: "sunny" },
    ];
  };

  it("the gateway's blob becomes reasoning_details on its turn's assistant message, wherever the item sits in the turn", () => {
    const enc = encodeReasoning("messages", [thinking, redacted]);
    for (const order of ["reasoning", "message"] as const) {
      const { body } = responsesToChatRequest({ model: "m", input: loop(enc, order) }, { flavor: "messages" });
      expect((body.messages as any[])[1]).toEqual({
        role: "assistant", content: "Let me check.", reasoning_details: [thinking, redacted],
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "w", arguments: "{}" } }],
      });
      expect(body.messages).toHaveLength(3);
    }
  });

  it("an interleaved turn (call, reasoning, call, text) is one assistant message with its tool messages right after", () => {
    // A chat host refuses an assistant message with tool_calls that a second assistant message follows.
    const enc = encodeReasoning("messages", [thinking]);
    const { body } = responsesToChatRequest({ model: "m", input: [
      { role: "user", content: "Weather and time?" },
      { type: "function_call", call_id: "toolu_a", name: "w", arguments: "{}" },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: enc },
      { type: "function_call", call_id: "toolu_b", name: "t", arguments: "{}" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
      { type: "function_call_output", call_id: "toolu_a", output: "sunny" },
      { type: "function_call_output", call_id: "toolu_b", output: "noon" },
    ] }, { flavor: "messages" });
    expect((body.messages as any[]).slice(1)).toEqual([
      { role: "assistant", content: "Let me check.", reasoning_details: [thinking], tool_calls: [
        { id: "toolu_a", type: "function", function: { name: "w", arguments: "{}" } },
        { id: "toolu_b", type: "function", function: { name: "t", arguments: "{}" } },
      ] },
      { role: "tool", tool_call_id: "toolu_a", content: "sunny" },
      { role: "tool", tool_call_id: "toolu_b", content: "noon" },
    ]);
  });

  it("is dropped for another upstream protocol or another chat provider, and when it is not the gateway's", () => {
    const fromClaude = encodeReasoning("messages", [thinking]);
    for (const [enc, flavor, provider] of [
      [fromClaude, "chat", "up"], [fromClaude, "gemini", "gem"], [encodeReasoning("chat", [thinking], "router"), "chat", "other"],
      ["gAAAAABopaque-openai-blob", "messages", "claude"], ["mgr1.!!!", "messages", "claude"], [undefined, "messages", "claude"],
    ] as const) {
      const { body } = responsesToChatRequest({ model: "m", input: loop(enc) }, { flavor, provider });
      expect((body.messages as any[])[1].reasoning_details).toBeUndefined();
    }
    const same = responsesToChatRequest({ model: "m", input: loop(encodeReasoning("chat", [thinking], "router")) }, { flavor: "chat", provider: "router" });
    expect((same.body.messages as any[])[1].reasoning_details).toEqual([thinking]);
  });

  it("a chat host's reasoning text goes back to that host only, for its driver to place as the host takes it (DeepSeek wants it in a tool loop)", () => {
    const rs = (enc: string) => ({ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Check Paris." }], encrypted_content: enc });
    const turn = (enc: string) => [
      { role: "user", content: "Weather?" },
      { type: "function_call", call_id: "call_a", name: "w", arguments: "{}" },
      rs(enc),
      { type: "function_call_output", call_id: "call_a", output: "sunny" },
    ];
    const ds = encodeReasoning("chat", [], "ds", "reasoning_content");
    const same = (responsesToChatRequest({ model: "m", input: turn(ds) }, { flavor: "chat", provider: "ds" }).body.messages as any[])[1];
    expect(replayedText(same)).toBe("Check Paris.");
    // No field of its own: a host the gateway does not know gets none it never asked for (reasoning-fields.ts).
    expect(JSON.parse(JSON.stringify(same))).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "call_a", type: "function", function: { name: "w", arguments: "{}" } }] });
    const groq = encodeReasoning("chat", [], "groq", "reasoning");
    expect(replayedText((responsesToChatRequest({ model: "m", input: turn(groq) }, { flavor: "chat", provider: "groq" }).body.messages as any[])[1])).toBe("Check Paris.");
    for (const other of [responsesToChatRequest({ model: "m", input: turn(ds) }, { flavor: "chat", provider: "other" }), responsesToChatRequest({ model: "m", input: turn(encodeReasoning("chat", [], "ds")) }, { flavor: "chat", provider: "ds" })]) {
      expect(replayedText((other.body.messages as any[])[1])).toBeUndefined();
    }
  });

  it("reasoning.summary asks Gemini for thought text (its knob), is honoured by Anthropic with thinking on, dropped elsewhere", () => {
    const body = { model: "m", input: "Hi", reasoning: { effort: "low", summary: "auto" }, providerOptions: { gem: { thinkingBudget: 1 } } };
    const g = responsesToChatRequest(body, { flavor: "gemini", provider: "gem" });
    expect(g.body.providerOptions).toEqual({ gem: { thinkingBudget: 1, reasoningSummary: "auto" } });
    expect(g.dropped).toEqual([]);
    expect(responsesToChatRequest(body, { flavor: "messages" }).dropped).toEqual([]);
    expect(responsesToChatRequest({ ...body, reasoning: { summary: "auto" } }, { flavor: "messages" }).dropped).toEqual(["reasoning.summary"]);
    expect(responsesToChatRequest(body, { flavor: "chat" }).dropped).toEqual(["reasoning.summary"]);
  });
});

describe("files and images", () => {
  const user = (...content: unknown[]) => ({ model: "m", input: [{ role: "user", content }] });
  const parts = (r: { body: any }) => r.body.messages[0].content;

  it("input_file file_data (data: URL, or base64 typed by its filename) is a chat file part", () => {
    expect(parts(responsesToChatRequest(user({ type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" }))))
      .toEqual([{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } }]);
    expect(parts(responsesToChatRequest(user({ type: "input_file", file_data: "JVBERi0=", filename: "Report.PDF" }))))
      .toEqual([{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "Report.PDF" } }]);
  });

  it("file_url goes to Anthropic (PDF) and Gemini as a URL part; a 400 naming the field on chat, for non-PDF on Anthropic, for file_id", () => {
    const url = { type: "input_file", file_url: "https://example.com/doc.pdf" };
    expect(parts(responsesToChatRequest(user(url), { flavor: "messages" }))).toEqual([{ type: "image_url", image_url: { url: url.file_url } }]);
    expect(parts(responsesToChatRequest(user(url), { flavor: "gemini" }))).toEqual([{ type: "image_url", image_url: { url: url.file_url } }]);
    const fails = (body: unknown, flavor: "chat" | "messages" | "gemini", param: string) => {
      let err: unknown;
      try { responsesToChatRequest(body, { flavor }); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).status).toBe(400);
      expect(JSON.stringify((err as GatewayError).toJSON())).toContain(param);
    };
    fails(user({ type: "input_text", text: "x" }, url), "chat", "input[0].content[1].file_url");
    fails(user({ type: "input_file", file_url: "https://example.com/page.html" }), "messages", "input[0].content[0].file_url");
    fails(user({ type: "input_file", file_url: "http://example.com/doc.pdf" }), "gemini", "input[0].content[0].file_url");
    fails(user({ type: "input_file", file_id: "file-abc" }), "messages", "input[0].content[0].file_id");
    fails(user({ type: "input_image", file_id: "file-abc" }), "chat", "input[0].content[0].file_id");
    fails(user({ type: "input_file", file_data: "JVBERi0=" }), "chat", "input[0].content[0].filename");
    fails({ model: "m", input: [{ type: "item_reference", id: "msg_1" }] }, "chat", "input[0].id");
  });

  it("input_image keeps a data: URL and its detail (original is chat's high); images in a tool output follow the tool messages", () => {
    expect(parts(responsesToChatRequest(user({ type: "input_image", image_url: "data:image/png;base64,AA", detail: "original" }))))
      .toEqual([{ type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "high" } }]);
    const { body } = responsesToChatRequest({ model: "m", input: [
      { role: "user", content: "draw" },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "here" }, { type: "input_image", image_url: "data:image/png;base64,AA" }] },
      { role: "user", content: "thanks" },
    ] });
    expect((body.messages as any[]).slice(2)).toEqual([
      { role: "tool", tool_call_id: "c1", content: "here" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
      { role: "user", content: "thanks" },
    ]);
  });
});

describe("tool_choice", () => {
  const tools = ["a", "b", "c"].map((name) => ({ type: "function", name, parameters: { type: "object" } }));
  it("allowed_tools keeps only the allowed tools and becomes the mode", () => {
    const { body } = responsesToChatRequest({ model: "m", input: "x", tools, tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "b" }] } });
    expect((body.tools as any[]).map((t) => t.function.name)).toEqual(["b"]);
    expect(body.tool_choice).toBe("required");
    expect(responsesToChatRequest({ model: "m", input: "x", tools, tool_choice: "none" }).body.tool_choice).toBe("none");
    expect(() => responsesToChatRequest({ model: "m", input: "x", tools, tool_choice: { type: "custom", name: "a" } })).toThrow(/tool_choice/);
  });
});

describe("responses prompt_cache_key / prompt_cache_retention", () => {
  const cache = { prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" };
  const opts = (driverProtocol: string) => ({ cacheMarkers: false, cacheAuto: false, driverProtocol, provider: "up" });
  const target = { modelId: "x/m", provider: "up", upstreamModel: "m", pricing: {}, maxTokens: 4096 };

  it("reach a chat upstream under the same names (its prompt cache routes by them), nothing dropped", async () => {
    const { responsesToChat } = await import("./index.ts");
    const t = responsesToChat.request({ model: "m", input: "hi", ...cache }, target, opts("openai"));
    expect(t.body).toMatchObject(cache);
    expect(t.dropped).toEqual([]);
  });

  it("are named in x-mg-dropped-params on Anthropic, Gemini and Converse, which have no such knobs, and not sent", async () => {
    const { responsesToMessages } = await import("../responses-to-messages/index.ts");
    const { responsesToGemini } = await import("../responses-to-gemini/index.ts");
    const { responsesToConverse } = await import("../responses-to-converse/index.ts");
    for (const [tr, proto] of [[responsesToMessages, "anthropic"], [responsesToGemini, "gemini"], [responsesToConverse, "bedrock"]] as const) {
      const t = tr.request({ model: "m", input: "hi", ...cache }, target, opts(proto));
      expect(t.dropped, proto).toEqual(["prompt_cache_key", "prompt_cache_retention"]);
      expect(JSON.stringify(t.body), proto).not.toContain("tenant-42");
    }
  });
});

describe("responses service_tier", () => {
  const opts = (driverProtocol: string) => ({ cacheMarkers: false, cacheAuto: false, driverProtocol, provider: "up" });
  const target = { modelId: "x/m", provider: "up", upstreamModel: "m", pricing: {}, maxTokens: 4096 };

  it("reaches a chat upstream as sent (chat has the same tiers), nothing dropped", async () => {
    const { responsesToChat } = await import("./index.ts");
    const t = responsesToChat.request({ model: "m", input: "hi", service_tier: "flex" }, target, opts("openai"));
    expect((t.body as Record<string, unknown>).service_tier).toBe("flex");
    expect(t.dropped).toEqual([]);
  });

  it("is named in x-mg-dropped-params on Anthropic, Gemini and Converse, as a chat client's is, and not sent", async () => {
    const { responsesToMessages } = await import("../responses-to-messages/index.ts");
    const { responsesToGemini } = await import("../responses-to-gemini/index.ts");
    const { responsesToConverse } = await import("../responses-to-converse/index.ts");
    for (const [tr, proto] of [[responsesToMessages, "anthropic"], [responsesToGemini, "gemini"], [responsesToConverse, "bedrock"]] as const) {
      const t = tr.request({ model: "m", input: "hi", service_tier: "flex" }, target, opts(proto));
      expect(t.dropped, proto).toEqual(["service_tier"]);
      expect(JSON.stringify(t.body), proto).not.toContain("flex");
      expect(tr.request({ model: "m", input: "hi", service_tier: null }, target, opts(proto)).dropped, proto).toEqual([]);
    }
  });
});

describe("call ids a Gemini model made", () => {
  it("lose their signature for every upstream but Gemini, function calls and their outputs alike", () => {
    const id = toolCallId({ functionCall: { id: "call_abc" }, thoughtSignature: "s".repeat(200) });
    const body = { model: "m", input: [{ role: "user", content: "x" }, { type: "function_call", call_id: id, name: "f", arguments: "{}" }, { type: "function_call_output", call_id: id, output: "r" }] };
    for (const flavor of ["chat", "messages"] as const) {
      const msgs = responsesToChatRequest(body, { flavor }).body.messages as any[];
      expect([msgs[1].tool_calls[0].id, msgs[2].tool_call_id]).toEqual(["call_abc", "call_abc"]);
    }
    const gem = responsesToChatRequest(body, { flavor: "gemini", provider: "g" }).body.messages as any[];
    expect([gem[1].tool_calls[0].id, gem[2].tool_call_id]).toEqual([id, id]);
  });

});

describe("truncation", () => {
  it("auto is named dropped (the request is sent whole; the answer says disabled)", () => {
    expect(responsesToChatRequest({ model: "m", input: "x", truncation: "auto" }).dropped).toContain("truncation");
    expect(responsesToChatRequest({ model: "m", input: "x", truncation: "disabled" }).dropped).not.toContain("truncation");
  });
});

describe("reasoning.effort fitted to the chat model (reasoning-efforts.ts)", () => {
  const ask = (provider: string, upstreamModel: string, effort: string) =>
    responsesToChat.request({ model: "m", input: "q", reasoning: { effort } }, { modelId: "x/m", provider, upstreamModel, pricing: {}, reasoning: true } as any, { provider } as any) as { body: any; dropped: string[] };

  it("none on DeepSeek is its thinking field (its chat API takes no none), not named", () => {
    const t = ask("deepseek", "deepseek-flash", "none");
    expect(t.body.thinking).toEqual({ type: "disabled" });
    expect(t.body).not.toHaveProperty("reasoning_effort");
    expect(t.dropped).not.toContain("reasoning.effort");
  });

  it("minimal and none on Groq's gpt-oss are low, medium on grok-3-mini is low, each named; what the model takes goes as sent", () => {
    for (const effort of ["minimal", "none"]) expect(ask("groq", "openai/gpt-oss-120b", effort)).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["reasoning.effort"] });
    expect(ask("xai", "grok-3-mini", "medium")).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["reasoning.effort"] });
    expect(ask("groq", "openai/gpt-oss-120b", "high")).toMatchObject({ body: { reasoning_effort: "high" }, dropped: [] });
    expect(ask("openai", "gpt-5", "minimal")).toMatchObject({ body: { reasoning_effort: "minimal" }, dropped: [] });
  });
});
