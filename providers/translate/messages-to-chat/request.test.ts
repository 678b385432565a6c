import { describe, expect, it } from "vitest";
import { Unsupported } from "../../../core/contracts/translator.ts";
import { messagesToChatRequest } from "./request.ts";
import { toolCallId } from "../chat-to-gemini/response.ts";
import { clientName } from "../client-names.ts";

/** The refusal a translation throws to pass its target over (Unsupported), as the client would read it. */
function refusalOf(f: () => unknown) {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(Unsupported);
    const err = (e as Unsupported).error;
    return { status: err.status, code: err.code, field: err.details?.field, message: err.message };
  }
  throw new Error("translated without a word");
}

describe("messages request -> chat request", () => {
  it("system first, tool results as tool messages before the user's text, images as image_url parts", () => {
    const { body, dropped } = messagesToChatRequest({
      model: "m", max_tokens: 50, stream: true, top_k: 3, thinking: { type: "enabled", budget_tokens: 2000 },
      system: [{ type: "text", text: "S1", cache_control: { type: "ephemeral" } }, { type: "text", text: "S2" }],
      metadata: { user_id: "u" }, stop_sequences: ["X"],
      messages: [
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAA" } }] },
        { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "text", text: "ok" }, { type: "tool_use", id: "tu1", name: "f", input: { a: 1 } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: [{ type: "text", text: "res" }, { type: "image", source: { type: "url", url: "https://x/y.png" } }], is_error: true }, { type: "text", text: "next" }] },
      ],
    });
    expect(dropped).toEqual(["thinking", "top_k"]);
    expect(body).toMatchObject({ max_tokens: 50, stream: true, stream_options: { include_usage: true }, user: "u", stop: ["X"] });
    expect(body.messages).toEqual([
      { role: "system", content: "S1\n\nS2" },
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAA" } }] },
      { role: "assistant", content: "ok", tool_calls: [{ id: "tu1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }] },
      { role: "tool", tool_call_id: "tu1", content: "Error: res" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }, { type: "text", text: "next" }] },
    ]);
  });

  it("structured outputs: output_config.format and the beta's output_format both become a strict json_schema response_format", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false };
    const want = { type: "json_schema", json_schema: { name: "output", schema, strict: true } };
    const ask = (extra: object) => messagesToChatRequest({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }], ...extra });
    expect(ask({ output_config: { format: { type: "json_schema", schema } } }).body.response_format).toEqual(want);
    expect(ask({ output_format: { type: "json_schema", schema } }).body.response_format).toEqual(want);
  });

  it("tools and tool_choice; server tools refused naming the field", () => {
    const { body } = messagesToChatRequest({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }], tools: [{ name: "f", input_schema: { type: "object" } }], tool_choice: { type: "any", disable_parallel_tool_use: true } });
    expect(body.tools).toEqual([{ type: "function", function: { name: "f", parameters: { type: "object" } } }]);
    expect(body.tool_choice).toBe("required");
    expect(body.parallel_tool_calls).toBe(false);
    expect(() => messagesToChatRequest({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }], tools: [{ type: "bash_20250124", name: "bash" }] })).toThrow(expect.objectContaining({ details: { field: "tools[0].type" } }));
  });

  it("tool conversations that do not map one to one come out as a valid chat sequence", () => {
    const use = (id: string, name: string) => ({ type: "tool_use", id, name, input: {} });
    const { body } = messagesToChatRequest({
      model: "m", max_tokens: 5,
      messages: [
        { role: "user", content: "q" },
        // Two assistant turns in a row (the API merges them): the calls must stay on one assistant message.
        { role: "assistant", content: [{ type: "text", text: "a" }, use("t1", "f")] },
        { role: "assistant", content: [use("t2", "g"), use("t3", "h")] },
        // Results out of order, text between them, an empty error, an image result, split over two user turns.
        { role: "user", content: [
          { type: "text", text: "here you go" },
          { type: "tool_result", tool_use_id: "t3", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } }] },
          { type: "tool_result", tool_use_id: "t1", content: "one", is_error: true },
        ] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", is_error: true }] },
      ],
    });
    expect(body.messages).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "a", tool_calls: [
        { id: "t1", type: "function", function: { name: "f", arguments: "{}" } },
        { id: "t2", type: "function", function: { name: "g", arguments: "{}" } },
        { id: "t3", type: "function", function: { name: "h", arguments: "{}" } },
      ] },
      { role: "tool", tool_call_id: "t1", content: "Error: one" },
      { role: "tool", tool_call_id: "t2", content: "Error" },
      { role: "tool", tool_call_id: "t3", content: "" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }, { type: "text", text: "here you go" }] },
    ]);
  });

  it("output_config.format becomes a strict json_schema response_format; effort is reported dropped", () => {
    const schema = { type: "object", properties: { a: { type: "number" } }, required: ["a"], additionalProperties: false };
    const { body, dropped } = messagesToChatRequest({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }], output_config: { effort: "high", format: { type: "json_schema", schema } } });
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema, strict: true } });
    expect(dropped).toEqual(["output_config.effort"]);
  });

  it("a message thread cannot be translated: 400 with the code the SDK's threads fall back on", () => {
    expect(() => messagesToChatRequest({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }], thread: { type: "create" } }))
      .toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "thread", error_code: "thread_unsupported_request" }) }));
  });

  it("mid-conversation system messages become chat system messages where they stand (after a turn's tool results)", () => {
    const { body } = messagesToChatRequest({
      model: "m", max_tokens: 5, system: "top",
      messages: [
        { role: "user", content: "q" },
        { role: "system", content: [{ type: "text", text: "Skills: a, b" }, { type: "text", text: "Agents: c" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        // Out of place (Anthropic would refuse it): it must not split the call from its result.
        { role: "system", content: "now in plan mode" },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }, { type: "text", text: "go on" }] },
        { role: "system", content: "" },
        { role: "system", content: "be brief" },
      ],
    });
    expect(body.messages).toEqual([
      { role: "system", content: "top" },
      { role: "user", content: "q" },
      { role: "system", content: "Skills: a, b\n\nAgents: c" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "r" },
      { role: "system", content: "now in plan mode" },
      { role: "user", content: "go on" },
      { role: "system", content: "be brief" },
    ]);
  });

  it("documents inside a tool result follow as user content (Claude Code's Read of a PDF); what chat cannot carry is named", () => {
    const pdf = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } };
    const { body, dropped } = messagesToChatRequest({
      model: "m", max_tokens: 5,
      messages: [
        { role: "user", content: "summarise" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: {} }, { type: "tool_use", id: "t2", name: "Read", input: {} }] },
        { role: "user", content: [
          { type: "tool_result", tool_use_id: "t1", content: [pdf] },
          { type: "tool_result", tool_use_id: "t2", content: [
            { type: "text", text: "two files" },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "plain words" } },
            { type: "document", source: { type: "url", url: "https://x/a.pdf" } },
            { type: "image", source: { type: "file", file_id: "file_1" } },
          ] },
        ] },
      ],
    });
    expect(body.messages).toEqual([
      { role: "user", content: "summarise" },
      { role: "assistant", content: null, tool_calls: [
        { id: "t1", type: "function", function: { name: "Read", arguments: "{}" } },
        { id: "t2", type: "function", function: { name: "Read", arguments: "{}" } },
      ] },
      { role: "tool", tool_call_id: "t1", content: "" },
      { role: "tool", tool_call_id: "t2", content: "two files" },
      { role: "user", content: [{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "document.pdf" } }, { type: "text", text: "plain words" }] },
    ]);
    expect(dropped).toEqual(["messages[2].content[1].content[2]", "messages[2].content[1].content[3]"]);
  });

  it("a tool loop moved off Gemini (/model) sends other upstreams the ids without the signature suffix, calls and results alike", () => {
    const signed = toolCallId({ functionCall: { id: "call_5f1e" }, thoughtSignature: "s".repeat(120) });
    const body = {
      model: "m", max_tokens: 5,
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: [{ type: "tool_use", id: signed, name: "w", input: {} }, { type: "tool_use", id: "toolu_2", name: "t", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "noon" }, { type: "tool_result", tool_use_id: signed, content: "sunny" }] },
      ],
    };
    const idsOf = (flavor: "chat" | "converse" | "gemini") => {
      const msgs = messagesToChatRequest(body, { scope: { flavor, provider: "p" } }).body.messages as any[];
      return { calls: msgs[1].tool_calls.map((t: any) => t.id), results: msgs.slice(2).map((m: any) => m.tool_call_id) };
    };
    // Results come in the calls' order, which needs the two spelt the same.
    expect(idsOf("chat")).toEqual({ calls: ["call_5f1e", "toolu_2"], results: ["call_5f1e", "toolu_2"] });
    expect(idsOf("converse")).toEqual({ calls: ["call_5f1e", "toolu_2"], results: ["call_5f1e", "toolu_2"] });
    // Gemini needs its signature back.
    expect(idsOf("gemini")).toEqual({ calls: [signed, "toolu_2"], results: [signed, "toolu_2"] });
  });

  it("an is_error tool_result: 'Error: ' text everywhere, and the flag the inner half of a chain reads (Converse), never sent to chat hosts", () => {
    const body = {
      model: "m", max_tokens: 5,
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "w", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", is_error: true, content: "city not found" }] },
      ],
    };
    const tool = (flavor: "chat" | "converse" | "gemini") => (messagesToChatRequest(body, { scope: { flavor, provider: "p" } }).body.messages as any[])[2];
    expect(tool("chat")).toEqual({ role: "tool", tool_call_id: "toolu_1", content: "Error: city not found" });
    expect(tool("converse")).toEqual({ role: "tool", tool_call_id: "toolu_1", content: "Error: city not found", is_error: true });
  });
});

describe("blocks of types chat has no place for", () => {
  it("a block the gateway does not know (the SDK's betas, tool_reference in a result) and a container_upload are left out and named", () => {
    const { body, dropped } = messagesToChatRequest({
      model: "m", max_tokens: 50,
      messages: [
        { role: "user", content: [{ type: "container_upload", file_id: "file_1" }, { type: "text", text: "q" }] },
        { role: "assistant", content: [{ type: "compaction", content: "summary" }, { type: "text", text: "x" }, { type: "tool_use", id: "tu1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: [{ type: "tool_reference", tool_name: "f" }] }, { type: "fallback", model: "x" }, { type: "text", text: "again" }] },
      ],
    });
    expect(dropped).toEqual(["messages[0].content[0]", "messages[1].content[0]", "messages[2].content[0].content[0]", "messages[2].content[1]"]);
    expect(JSON.stringify(body)).not.toMatch(/compaction|tool_reference|container_upload|fallback/);
    expect(body.messages).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "x", tool_calls: [{ id: "tu1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "tu1", content: "" },
      { role: "user", content: "again" },
    ]);
  });

  it("blocks in consecutive turns of one role (merged for chat) are named where the client sent them, not where the merge put them", () => {
    const { dropped } = messagesToChatRequest({
      model: "m", max_tokens: 50,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "Hello" },
        { role: "assistant", content: [{ type: "text", text: "again" }, { type: "compaction", content: "s" }] },
        { role: "user", content: [{ type: "text", text: "one" }] },
        { role: "user", content: [{ type: "made_up" }, { type: "text", text: "two" }] },
        { role: "user", content: "three" },
        { role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "d" }, title: "T" }] },
      ],
    });
    // Merged, these were messages[1].content[2], messages[3].content[1] and messages[3].content[4].title.
    expect(dropped).toEqual(["messages[2].content[1]", "messages[4].content[0]", "messages[6].content[0].title"]);
    // A refusal names the block in the client's own message too.
    expect(() => messagesToChatRequest({ model: "m", max_tokens: 50, messages: [
      { role: "user", content: "look" },
      { role: "user", content: [{ type: "image", source: { type: "file", file_id: "file_1" } }] },
    ] })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: "messages[1].content[0].source.type" }) }));
  });

  it("thinking and an earlier Claude turn's server-tool blocks go unnamed, as before", () => {
    const { dropped } = messagesToChatRequest({
      model: "m", max_tokens: 50,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } }, { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }, { type: "text", text: "x" }] },
        { role: "user", content: "again" },
      ],
    });
    expect(dropped).toEqual([]);
  });

  it("an assistant turn made only of such blocks is no message (not an empty one); the turns around it are kept", () => {
    const { body, dropped } = messagesToChatRequest({
      model: "m", max_tokens: 50,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "compaction", content: "summary" }] },
        { role: "user", content: "again" },
      ],
    });
    expect(dropped).toEqual(["messages[1].content[0]"]);
    expect(body.messages).toEqual([{ role: "user", content: "hi" }, { role: "user", content: "again" }]);
  });

  it("turns made only of such blocks leave nothing to send: the gateway's 400 naming messages, for this target to be passed over", () => {
    const translate = (messages: unknown[], system?: string) => () => messagesToChatRequest({ model: "m", max_tokens: 50, system, messages });
    expect(refusalOf(translate([{ role: "user", content: [{ type: "made_up", text: "q" }] }]))).toEqual({
      status: 400, code: "INVALID_REQUEST", field: "messages",
      message: expect.stringContaining("left out (messages[0].content[0]), and no message remains"),
    });
    // A system prompt alone is not the conversation: Gemini and Converse would get no turn at all.
    expect(refusalOf(translate([{ role: "user", content: [{ type: "fallback", model: "x" }] }, { role: "assistant", content: [{ type: "compaction", content: "s" }] }], "Be brief")).message)
      .toContain("(messages[0].content[0], messages[1].content[0])");
    // Any turn left keeps the request going as before.
    expect(translate([{ role: "user", content: [{ type: "made_up", text: "q" }, { type: "text", text: "x" }] }])().body.messages).toEqual([{ role: "user", content: "x" }]);
  });

  it("a last user turn made only of such blocks is not left out silently: the assistant turn before it would end the request, read as a prefill", () => {
    const translate = (messages: unknown[]) => () => messagesToChatRequest({ model: "m", max_tokens: 50, messages });
    const earlier = [{ role: "user", content: "hi" }, { role: "assistant", content: "Hello! The capital is" }];
    expect(refusalOf(translate([...earlier, { role: "user", content: [{ type: "mystery", note: "What is the capital of France?" }] }]))).toEqual({
      status: 400, code: "INVALID_REQUEST", field: "messages",
      message: expect.stringContaining("the last user message's content blocks were left out (messages[2].content[0])"),
    });
    // Consecutive user turns are one turn: all of it left out is the same refusal.
    expect(refusalOf(translate([...earlier, { role: "user", content: [{ type: "made_up" }] }, { role: "user", content: [{ type: "compaction", content: "s" }] }])).message)
      .toContain("the last user message's content blocks were left out (messages[2].content[0], messages[3].content[0])");
    // A system message after it does not make the turn any less the client's last.
    expect(refusalOf(translate([...earlier, { role: "user", content: [{ type: "made_up" }] }, { role: "system", content: "Be brief" }])).field).toBe("messages");
    // A prefill the client sent after it does not stand in for the question: the model would continue the prefill as
    // the answer to the earlier turn, so the same refusal, prefill or no.
    const question = [...earlier, { role: "user", content: [{ type: "made_up", text: "What is the capital of France?" }] }];
    expect(refusalOf(translate([...question, { role: "assistant", content: "The answer is" }]))).toEqual({
      status: 400, code: "INVALID_REQUEST", field: "messages",
      message: expect.stringContaining("the last user message's content blocks were left out (messages[2].content[0])"),
    });
    // A system message between them changes nothing.
    expect(refusalOf(translate([...question, { role: "system", content: "Be brief" }, { role: "assistant", content: "The answer is" }])).field).toBe("messages");
    // A prefill the client sent is its own: translated as before.
    expect(translate(earlier)().body.messages).toEqual(earlier);
    expect(translate([...earlier.slice(0, 1), { role: "assistant", content: [{ type: "made_up" }] }, { role: "user", content: "and?" }, { role: "assistant", content: "So" }])().body.messages)
      .toEqual([earlier[0], { role: "user", content: "and?" }, { role: "assistant", content: "So" }]);
    // An earlier user turn left out, or a last one with anything left (a tool result), keeps the request going.
    expect(translate([{ role: "user", content: [{ type: "made_up" }] }, ...earlier.slice(1), { role: "user", content: "go on" }])().body.messages)
      .toEqual([earlier[1], { role: "user", content: "go on" }]);
    const toolTurn = [{ role: "user", content: "weather?" }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "w", input: {} }] }];
    expect(translate([...toolTurn, { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "sunny" }, { type: "made_up" }] }])().body.messages)
      .toContainEqual({ role: "tool", tool_call_id: "t1", content: "sunny" });
  });
});

describe("messages request -> a chat completions upstream's own limits", () => {
  const chat = (body: any, flavor: "chat" | "converse" | "gemini" = "chat") =>
    messagesToChatRequest({ model: "m", max_tokens: 50, ...body }, { scope: { flavor, provider: "openai" } });

  it("stop_sequences go to every upstream as sent, named for the chat host's own limit (its driver checks it)", () => {
    const body = { messages: [{ role: "user", content: "x" }], stop_sequences: ["1", "2", "3", "4", "5", "6"] };
    for (const flavor of ["chat", "gemini", "converse"] as const) expect(chat(body, flavor).body.stop).toHaveLength(6);
    expect(clientName(chat(body).body, "stop")).toBe("stop_sequences");
  });

  it("an assistant prefill is named (chat upstreams answer a turn of their own after it); Converse's Claude continues it", () => {
    const prefill = { messages: [{ role: "user", content: "JSON please" }, { role: "assistant", content: "{\"answer\":" }] };
    const { body, dropped } = chat(prefill);
    expect(dropped).toEqual(["messages[1]"]);
    expect((body.messages as any[]).at(-1)).toEqual({ role: "assistant", content: "{\"answer\":" });
    expect(chat({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "text", text: "Answer: " }] }] }).dropped).toEqual(["messages[1]"]);
    expect(chat(prefill, "converse").dropped).toEqual([]);
    expect(chat({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }, { role: "user", content: "more" }] }).dropped).toEqual([]);
  });
});

describe("knobs a chat upstream ignores are named as the Messages client sent them", () => {
  it("service_tier, and a document's title, context and enabled citations (top level and inside a tool result)", () => {
    const doc = { type: "document", source: { type: "text", media_type: "text/plain", data: "The sky is blue." }, title: "Sky facts", context: "From the 2024 almanac", citations: { enabled: true } };
    const { body, dropped } = messagesToChatRequest({
      model: "m", max_tokens: 5, service_tier: "standard_only",
      messages: [
        { role: "user", content: [doc, { type: "text", text: "Colour?" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "read" }, { ...doc, citations: { enabled: false } }] }] },
      ],
    });
    expect(dropped).toEqual([
      "service_tier",
      "messages[0].content[0].title", "messages[0].content[0].context", "messages[0].content[0].citations",
      "messages[2].content[0].content[1].title", "messages[2].content[0].content[1].context",
    ]);
    expect(body.service_tier).toBeUndefined();
    expect((body.messages as any[])[0]).toEqual({ role: "user", content: "The sky is blue.\nColour?" });
  });

  it("a document without them, and service_tier null, name nothing", () => {
    const { dropped } = messagesToChatRequest({
      model: "m", max_tokens: 5, service_tier: null,
      messages: [{ role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "x" }, title: null, citations: { enabled: false } }] }],
    });
    expect(dropped).toEqual([]);
  });
});
