import { describe, expect, it } from "vitest";
import { Unsupported } from "../../../core/contracts/translator.ts";
import type { GatewayError } from "../../../core/errors.ts";
import { encodeReasoning } from "../responses-to-chat/reasoning.ts";
import { replayedText } from "../replayed-reasoning-text.ts";
import { geminiToChatRequest, type GeminiScope } from "./request.ts";
import { clientName } from "../client-names.ts";
import type { BlobScope } from "./reasoning.ts";

const target = { modelId: "anthropic/claude", provider: "claude", upstreamModel: "claude-x", pricing: {}, reasoning: true } as any;
const scope: GeminiScope = { flavor: "messages", provider: "claude" };
const translate = (body: any, t = target, s = scope) => geminiToChatRequest({ model: "anthropic/claude", ...body }, t, s, s.provider);

describe("Gemini request -> chat", () => {
  it("system instruction, merged turns, tools with Gemini's schema, toolConfig and generationConfig", () => {
    const { body, dropped } = translate({
      systemInstruction: { parts: [{ text: "Be brief." }, { text: "Use tools." }] },
      contents: [{ role: "user", parts: [{ text: "Hi" }] }, { role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] }],
      tools: [{ functionDeclarations: [
        { name: "read_file", description: "Read", parameters: { type: "OBJECT", properties: { path: { type: "STRING", nullable: true }, n: { type: "INTEGER" } }, required: ["path"], propertyOrdering: ["path", "n"] } },
        { name: "ls", parametersJsonSchema: { type: "object", properties: { dir: { type: "string" } }, additionalProperties: false } },
      ] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["ls"] } },
      generationConfig: { temperature: 0.5, topP: 0.9, topK: 40, maxOutputTokens: 300, stopSequences: ["END"], candidateCount: 2, responseMimeType: "application/json", responseSchema: { type: "OBJECT", properties: { a: { type: "STRING" } } } },
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
    });
    expect(body.messages).toEqual([
      { role: "system", content: "Be brief.\nUse tools." },
      { role: "user", content: [{ type: "text", text: "Hi" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
    ]);
    expect(body.tools).toEqual([
      { type: "function", function: { name: "read_file", description: "Read", parameters: { type: "object", properties: { path: { type: ["string", "null"] }, n: { type: "integer" } }, required: ["path"] } } },
      { type: "function", function: { name: "ls", parameters: { type: "object", properties: { dir: { type: "string" } }, additionalProperties: false } } },
    ]);
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "ls" } });
    expect(body).toMatchObject({ temperature: 0.5, top_p: 0.9, max_tokens: 300, stop: ["END"], n: 2, response_format: { type: "json_schema", json_schema: { name: "response", schema: { type: "object", properties: { a: { type: "string" } } } } } });
    expect(dropped).toEqual(["safetySettings", "generationConfig.topK"]);
  });

  it("enum mode (text/x.enum) has no chat form: the mime type and its schema are both named as dropped", () => {
    const { body, dropped } = translate({
      contents: [{ role: "user", parts: [{ text: "which color" }] }],
      generationConfig: { responseMimeType: "text/x.enum", responseSchema: { type: "STRING", enum: ["red", "blue"] } },
    });
    expect(body.response_format).toBeUndefined();
    expect(dropped).toEqual(["generationConfig.responseMimeType", "generationConfig.responseSchema"]);
  });

  it("a tool loop: calls keep the upstream's ids (Gemini CLI's name__ prefix off), answers right after them in the calls' order, text last", () => {
    const { body } = translate({ contents: [
      { role: "user", parts: [{ text: "Weather and time?" }] },
      { role: "model", parts: [{ text: "Checking." }, { functionCall: { id: "get_weather__call_a1", name: "get_weather", args: { city: "Paris" } } }, { functionCall: { name: "get_time", args: { city: "Paris" } } }] },
      { role: "user", parts: [
        { functionResponse: { id: "get_time-1764150000-x1", name: "get_time", response: { output: "noon" } } },
        { functionResponse: { id: "get_weather__call_a1", name: "get_weather", response: { error: "down" } } },
        { text: "Thanks" },
      ] },
    ] });
    expect(body.messages).toEqual([
      { role: "user", content: "Weather and time?" },
      { role: "assistant", content: "Checking.", tool_calls: [
        { id: "call_a1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "call_1_2", type: "function", function: { name: "get_time", arguments: '{"city":"Paris"}' } },
      ] },
      { role: "tool", tool_call_id: "call_a1", content: "Error: down", is_error: true },
      { role: "tool", tool_call_id: "call_1_2", content: "noon" },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("a failed call (Gemini CLI's response.error, no output) is an error result: 'Error: …' text, flagged for the chained upstream only", () => {
    const loop = (response: any) => [
      { role: "user", parts: [{ text: "run it" }] },
      { role: "model", parts: [{ functionCall: { id: "c1", name: "run_shell_command", args: { command: "false" } } }] },
      { role: "user", parts: [{ functionResponse: { id: "c1", name: "run_shell_command", response } }] },
    ];
    const tool = (response: any, s = scope) => (translate({ contents: loop(response) }, target, s).body.messages as any[])[2];
    expect(tool({ error: "Command failed: exit code 1" })).toEqual({ role: "tool", tool_call_id: "c1", content: "Error: Command failed: exit code 1", is_error: true });
    expect(tool({ error: { code: 2, message: "no such file" } }).content).toBe('Error: {"code":2,"message":"no such file"}');
    // An OpenAI-protocol upstream would refuse the unknown field: it has the text.
    expect(tool({ error: "Command failed" }, { flavor: "chat", provider: "claude" })).toEqual({ role: "tool", tool_call_id: "c1", content: "Error: Command failed" });
    // Output beside an error is still the call's result.
    expect(tool({ output: "partial", error: "warning" })).toEqual({ role: "tool", tool_call_id: "c1", content: '{"output":"partial","error":"warning"}' });
  });

  it("a chat upstream's reasoning text comes back from the blob, for the driver to place as the host takes it; another provider's and unknown fields do not", () => {
    const chatScope: BlobScope = { flavor: "chat", provider: "deepseek" };
    const model = (thoughtSignature: string) => [
      { role: "user", parts: [{ text: "q" }] },
      { role: "model", parts: [{ functionCall: { id: "t1", name: "f", args: {} }, thoughtSignature }] },
      { role: "user", parts: [{ functionResponse: { id: "t1", name: "f", response: { output: "ok" } } }] },
    ];
    const assistant = (sig: string) => (translate({ contents: model(sig) }, target, chatScope).body.messages as any[])[1];
    const same = assistant(encodeReasoning("chat", [], "deepseek", "reasoning_content", "I should call f."));
    expect(replayedText(same)).toBe("I should call f.");
    // No field of its own: a host the gateway does not know gets none its client never sent (openai-compatible/reasoning-fields.ts).
    expect(JSON.parse(JSON.stringify(same))).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] });
    expect(replayedText(assistant(encodeReasoning("chat", [], "groq", "reasoning", "x")))).toBeUndefined();
    const injected = assistant(encodeReasoning("chat", [], "deepseek", "content", "injected"));
    expect(injected.content).toBeNull();
    expect(replayedText(injected)).toBeUndefined();
  });

  it("a function response answering no call is a 400 naming the part", () => {
    expect(() => translate({ contents: [{ role: "user", parts: [{ functionResponse: { name: "f", response: {} } }] }] })).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "contents[0].parts[0].functionResponse" }) }));
  });

  it("the gateway's reasoning blob in a thoughtSignature replays to the protocol that made it; thought parts and other signatures do not", () => {
    const detail = { type: "reasoning.text", text: "Let me think.", signature: "sig1", format: "anthropic-claude-v1", index: 0 };
    const contents = [
      { role: "user", parts: [{ text: "q" }] },
      { role: "model", parts: [{ functionCall: { id: "t1", name: "f", args: {} }, thoughtSignature: encodeReasoning("messages", [detail]) }, { functionCall: { id: "t2", name: "f", args: {} }, thoughtSignature: "skip_thought_signature_validator" }] },
      { role: "user", parts: [{ functionResponse: { id: "t1", name: "f", response: {} } }, { functionResponse: { id: "t2", name: "f", response: {} } }] },
    ];
    expect((translate({ contents }).body.messages as any)[1].reasoning_details).toEqual([detail]);
    expect((translate({ contents }, target, { flavor: "chat", provider: "claude" }).body.messages as any)[1].reasoning_details).toBeUndefined();
    // A model turn of thoughts alone (no signature) carries nothing and is left out.
    const only = translate({ contents: [{ role: "user", parts: [{ text: "a" }] }, { role: "model", parts: [{ text: "hmm", thought: true }] }, { role: "user", parts: [{ text: "b" }] }] });
    expect((only.body.messages as any[]).map((m) => m.role)).toEqual(["user", "user"]);
  });

  it("thinkingConfig: a budget rounds up to an effort, includeThoughts alone is medium, off on a model that cannot think", () => {
    const think = (thinkingConfig: any, t = target, s = scope) => translate({ contents: [{ parts: [{ text: "q" }] }], generationConfig: { thinkingConfig } }, t, s);
    expect(think({ thinkingBudget: 3000 }).body.reasoning_effort).toBe("high");
    expect(think({ thinkingBudget: 20000 }).body.reasoning_effort).toBe("max");
    expect(think({ thinkingBudget: 20000 }, target, { flavor: "chat", provider: "claude" }).body.reasoning_effort).toBe("high");
    expect(think({ includeThoughts: true }).body.reasoning_effort).toBe("medium");
    expect(think({ thinkingLevel: "LOW" }).body.reasoning_effort).toBe("low");
    expect(think({ thinkingBudget: 0, includeThoughts: true }).body.reasoning_effort).toBeUndefined();
    const plain = think({ includeThoughts: true }, { ...target, reasoning: false });
    expect(plain.body.reasoning_effort).toBeUndefined();
    expect(plain.dropped).toContain("generationConfig.thinkingConfig");
  });

  it("what only Gemini serves passes the target over (Unsupported), naming the field", () => {
    const hit = (body: any) => { try { translate({ contents: [{ parts: [{ text: "q" }] }], ...body }); } catch (e) { return e; } };
    for (const [body, field] of [
      [{ tools: [{ googleSearch: {} }] }, "tools[0].googleSearch"],
      [{ cachedContent: "cachedContents/abc" }, "cachedContent"],
      [{ generationConfig: { responseModalities: ["IMAGE"] } }, "generationConfig.responseModalities"],
    ] as const) {
      const e = hit(body);
      expect(e).toBeInstanceOf(Unsupported);
      expect((e as Unsupported).error.details?.field).toBe(field);
    }
  });

  it("inlineData by type, fileData as a URL, media inside a function response after the tool message; stream asks for usage", () => {
    const { body } = translate({ stream: true, contents: [
      { role: "user", parts: [{ text: "go" }] },
      { role: "model", parts: [{ functionCall: { id: "c", name: "shot", args: {} } }] },
      { role: "user", parts: [
        { functionResponse: { id: "c", name: "shot", response: { output: "done" }, parts: [{ inlineData: { mimeType: "image/png", data: "PNG" } }] } },
        { inlineData: { mimeType: "application/pdf", data: "PDF" } },
        { inlineData: { mimeType: "text/plain", data: Buffer.from("notes").toString("base64") } },
        { inlineData: { mimeType: "audio/wav", data: "WAV" } },
        { fileData: { mimeType: "image/jpeg", fileUri: "https://example.com/a.jpg" } },
      ] },
    ] });
    expect((body.messages as any[]).slice(2)).toEqual([
      { role: "tool", tool_call_id: "c", content: "done" },
      { role: "user", content: [
        { type: "image_url", image_url: { url: "data:image/png;base64,PNG" } },
        { type: "file", file: { file_data: "data:application/pdf;base64,PDF", filename: "document.pdf" } },
        { type: "text", text: "notes" },
        { type: "input_audio", input_audio: { data: "WAV", format: "wav" } },
        { type: "image_url", image_url: { url: "https://example.com/a.jpg" } },
      ] },
    ]);
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});

describe("Gemini fileData -> a chat part", () => {
  const refusal = (fileData: Record<string, string>) => {
    try {
      translate({ contents: [{ role: "user", parts: [{ text: "Look." }, { fileData }] }] });
    } catch (e) {
      return { status: (e as GatewayError).status, field: (e as GatewayError).details?.field };
    }
    return undefined;
  };

  it("an image URL is an image part; a PDF, video or audio URL, a Files API or gs:// URI is a 400 naming the part", () => {
    expect(refusal({ mimeType: "image/png", fileUri: "https://example.com/a.png" })).toBeUndefined();
    expect(refusal({ fileUri: "https://example.com/a.png" })).toBeUndefined(); // no type said: an image, as before
    expect(refusal({ mimeType: "application/pdf", fileUri: "https://example.com/report.pdf" })).toEqual({ status: 400, field: "contents[0].parts[1].fileData.mimeType" });
    expect(refusal({ mimeType: "video/mp4", fileUri: "https://www.youtube.com/watch?v=dQw4w9WgXcQ" })).toEqual({ status: 400, field: "contents[0].parts[1].fileData.mimeType" });
    expect(refusal({ mimeType: "audio/mpeg", fileUri: "https://example.com/a.mp3" })).toEqual({ status: 400, field: "contents[0].parts[1].fileData.mimeType" });
    expect(refusal({ mimeType: "image/png", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc" })).toEqual({ status: 400, field: "contents[0].parts[1].fileData.fileUri" });
    expect(refusal({ mimeType: "image/png", fileUri: "gs://bucket/a.png" })).toEqual({ status: 400, field: "contents[0].parts[1].fileData.fileUri" });
  });

  it("a PDF URL goes on as a URL part when the next half downloads it; elsewhere the 400 names every upstream that reads one", () => {
    const pdf = { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/download?id=3" } };
    const { body } = translate({ contents: [{ role: "user", parts: [{ text: "Sum up." }, pdf] }] }, target, { ...scope, urlPdfs: true });
    expect((body.messages as any[])[0].content[1]).toEqual({ type: "image_url", image_url: { url: pdf.fileData.fileUri } });
    let message = "";
    try {
      translate({ contents: [{ role: "user", parts: [pdf] }] });
    } catch (e) {
      message = (e as GatewayError).message;
    }
    // Converse and Claude on Bedrock InvokeModel or Vertex take it (downloaded): "by Gemini only" sent clients elsewhere.
    expect(message).toBe("fileData of type application/pdf is read from its URL only by Gemini, Bedrock models and Claude on Vertex (the gateway downloads it for those two): send it as inlineData or call one of those models");
  });

  it("a YouTube link without a mimeType (Google's own examples) is a 400 naming the part, not an image URL", () => {
    for (const fileUri of ["https://www.youtube.com/watch?v=9hE5-98ZeCg", "https://youtu.be/9hE5-98ZeCg", "https://m.youtube.com/watch?v=9hE5-98ZeCg", "https://youtube.com/shorts/abc"]) {
      expect(refusal({ fileUri })).toEqual({ status: 400, field: "contents[0].parts[1].fileData.fileUri" });
    }
    expect(refusal({ fileUri: "https://notyoutube.com/a.png" })).toBeUndefined();
  });
});

describe("Gemini request -> a chat completions upstream's stop limit", () => {
  it("stopSequences go as sent, named generationConfig.stopSequences for the chat host's limit (its driver checks it)", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { stopSequences: ["1", "2", "3", "4", "5"] } };
    const gpt = { ...target, modelId: "openai/gpt-4.1", provider: "openai", upstreamModel: "gpt-4.1", reasoning: false };
    const chat = translate(body, gpt, { flavor: "chat", provider: "openai" }).body;
    expect(chat.stop).toHaveLength(5);
    expect(clientName(chat, "stop")).toBe("generationConfig.stopSequences");
    expect(translate(body).body.stop).toHaveLength(5); // Claude (through Messages) takes them
  });
});

describe("Gemini request -> chat: consecutive contents of one role (merged for chat)", () => {
  const field = (contents: any[]) => {
    try {
      translate({ contents });
    } catch (e) {
      return (e as GatewayError).details?.field;
    }
    return undefined;
  };

  it("a refused part is named where the client sent it, not where the merge put it", () => {
    // Merged, the fileData was contents[0].parts[1], a field the client never sent.
    expect(field([{ role: "user", parts: [{ text: "Look." }] }, { role: "user", parts: [{ fileData: { mimeType: "image/png", fileUri: "gs://bucket/a.png" } }] }]))
      .toBe("contents[1].parts[0].fileData.fileUri");
    expect(field([
      { role: "user", parts: [{ text: "a" }, { text: "b" }] },
      { role: "model", parts: [{ text: "ok" }] },
      { role: "user", parts: [{ text: "c" }] },
      { parts: [{ text: "d" }, { fileData: { mimeType: "application/pdf", fileUri: "https://example.com/r.pdf" } }] },
    ])).toBe("contents[3].parts[1].fileData.mimeType");
    // A function response answering nothing, in the second of two user contents.
    expect(field([{ role: "user", parts: [{ text: "go" }] }, { role: "user", parts: [{ text: "x" }, { functionResponse: { name: "f", response: {} } }] }]))
      .toBe("contents[1].parts[1].functionResponse");
  });

  it("a chat step's name for a part of a merged turn is the client's own path too", () => {
    const { body } = translate({ contents: [{ role: "user", parts: [{ text: "Hi" }] }, { role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] }] });
    expect(clientName(body, "messages[0].content[1].image_url.url")).toBe("contents[1].parts[0].inlineData");
    expect(clientName(body, "messages[0]")).toBe("contents");
  });
});

describe("gemini -> chat: thinkingBudget 0 (thinking off)", () => {
  const openai = (upstreamModel: string) => ({ modelId: "openai/x", provider: "openai", upstreamModel, pricing: {}, reasoning: true }) as any;
  const off = (t: any, flavor: BlobScope["flavor"] = "chat") =>
    geminiToChatRequest({ contents: [{ role: "user", parts: [{ text: "q" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }, t, { flavor, provider: t.provider }, t.provider);

  it("on an OpenAI reasoning model (which reasons at medium when asked nothing) is its least effort, named unless it is off", () => {
    expect(off(openai("gpt-5"))).toMatchObject({ body: { reasoning_effort: "minimal" }, dropped: ["generationConfig.thinkingConfig"] });
    expect(off(openai("o4-mini"))).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["generationConfig.thinkingConfig"] });
    expect(off(openai("gpt-5.2"))).toMatchObject({ body: { reasoning_effort: "none" }, dropped: [] });
  });

  it("on other hosts' reasoning models: DeepSeek's own off (its thinking field), else the least effort they take, named", () => {
    const deepseek = off({ ...openai("deepseek-flash"), provider: "deepseek" });
    expect(deepseek).toMatchObject({ body: { thinking: { type: "disabled" } }, dropped: [] });
    expect(deepseek.body).not.toHaveProperty("reasoning_effort");
    expect(off({ ...openai("openai/gpt-oss-120b"), provider: "groq" })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["generationConfig.thinkingConfig"] });
    expect(off({ ...openai("grok-3-mini"), provider: "xai" })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["generationConfig.thinkingConfig"] });
  });

  it("an effort the chat model does not take is the nearest that costs no more, named", () => {
    const ask = (t: any, thinkingConfig: any) =>
      geminiToChatRequest({ contents: [{ role: "user", parts: [{ text: "q" }] }], generationConfig: { thinkingConfig } }, t, { flavor: "chat", provider: t.provider }, t.provider);
    const grok = { ...openai("grok-3-mini"), provider: "xai" };
    const oss = { ...openai("openai/gpt-oss-120b"), provider: "groq" };
    expect(ask(grok, { thinkingBudget: 2000 })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["generationConfig.thinkingConfig"] });
    expect(ask(oss, { thinkingLevel: "minimal" })).toMatchObject({ body: { reasoning_effort: "low" }, dropped: ["generationConfig.thinkingConfig"] });
    expect(ask(oss, { thinkingLevel: "high" })).toMatchObject({ body: { reasoning_effort: "high" }, dropped: [] });
  });

  it("elsewhere no effort is sent (Claude thinks only when asked), nothing named", () => {
    expect(off(target, "messages")).toMatchObject({ dropped: [] });
    expect(off(target, "messages").body).not.toHaveProperty("reasoning_effort");
    expect(off({ ...openai("gpt-4o"), reasoning: false }).body).not.toHaveProperty("reasoning_effort");
  });
});

