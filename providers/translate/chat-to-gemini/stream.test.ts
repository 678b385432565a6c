import { describe, expect, it, vi } from "vitest";
import { SseParser } from "../../../core/sse/parse.ts";
import { GeminiToChatStream } from "./stream.ts";
import { chatToGeminiRequest } from "./request.ts";
import { geminiToChatResponse, signatureOf, toolCallId } from "./response.ts";

const frame = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;

describe("gemini stream -> chat chunks", () => {
  it("CRLF frames split anywhere; whole function calls; STOP means tool_calls; cumulative usage; [DONE] at EOF", () => {
    const wire = frame({ candidates: [{ content: { role: "model", parts: [{ text: "Let me look." }] }, index: 0 }], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3 }, responseId: "r1" })
      + frame({ candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "f", args: { a: 1 } } }, { functionCall: { name: "g", args: {} } }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 8 } });
    const parser = new SseParser();
    const t = new GeminiToChatStream({ includeUsage: true, provider: "gem", model: "gemini" });
    const out: any[] = [];
    for (let i = 0; i < wire.length; i += 7) for (const e of parser.push(wire.slice(i, i + 7))) out.push(...t.push(e));
    out.push(...t.end());
    const parsed = out.map((e) => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
    const deltas = parsed.filter((c) => c !== "[DONE]" && c.choices.length).map((c) => c.choices[0]);
    expect(deltas[0].delta).toEqual({ role: "assistant", content: "" });
    expect(deltas[1].delta).toEqual({ content: "Let me look." });
    expect(deltas[2].delta.tool_calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "f", arguments: "{\"a\":1}" } });
    expect(deltas[3].delta.tool_calls[0]).toMatchObject({ index: 1, function: { name: "g", arguments: "{}" } });
    expect(deltas[4]).toMatchObject({ delta: {}, finish_reason: "tool_calls" });
    expect(parsed.at(-2).usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 });
    expect(parsed.at(-1)).toBe("[DONE]");
  });

  it("text and calls a chunk carries after the candidate's finish reason are dropped: the finish, then the usage chunk, then [DONE]", () => {
    for (const search of [false, true]) {
      const t = new GeminiToChatStream({ includeUsage: true, provider: "gem", model: "gemini", search });
      const out = [
        { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Paris." }] }, finishReason: "STOP" }] },
        { candidates: [{ index: 0, content: { role: "model", parts: [{ text: " TRAILING TEXT" }, { functionCall: { name: "f", args: {} } }] } }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 30 } },
      ].flatMap((c) => t.push({ data: JSON.stringify(c) }));
      out.push(...t.end());
      const parsed = out.map((e) => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
      const choices = parsed.filter((c) => c !== "[DONE]").flatMap((c) => c.choices);
      expect(choices.map((c) => c.delta.content ?? "").join("")).toBe("Paris.");
      expect(choices.filter((c) => c.delta.tool_calls)).toEqual([]);
      expect(choices.at(-1).finish_reason).toBe("stop");
      expect(parsed.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 30 } });
      expect(parsed.at(-1)).toBe("[DONE]");
    }
  });

  it("an in-band error is judged as its HTTP status: INVALID_ARGUMENT the client's 400, UNAVAILABLE worth another try", () => {
    const t = () => new GeminiToChatStream({ includeUsage: false, provider: "gem", model: "g" });
    const refused = { error: { code: 400, message: "Request contains an invalid argument.", status: "INVALID_ARGUMENT" } };
    expect(() => t().push({ data: JSON.stringify(refused) })).toThrow(expect.objectContaining({ status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" } }));
    const overloaded = { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } };
    expect(() => t().push({ data: JSON.stringify(overloaded) })).toThrow(expect.objectContaining({ status: 502, code: "UPSTREAM_ERROR", retryable: true }));
  });

  it("EOF before a finish reason is a truncated stream", () => {
    const t = new GeminiToChatStream({ includeUsage: false, provider: "gem", model: "g" });
    t.push({ data: JSON.stringify({ candidates: [{ content: { parts: [{ text: "x" }] } }] }) });
    expect(() => t.end()).toThrow(/finish reason/);
  });
});

describe("chat <-> gemini request and response", () => {
  const target = { modelId: "google/g", provider: "gem", upstreamModel: "g", pricing: { output: "0.0000025" } };
  it("builds contents, systemInstruction, tool config and generationConfig", () => {
    const { body } = chatToGeminiRequest({
      messages: [{ role: "system", content: "S" }, { role: "user", content: [{ type: "text", text: "q" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] }],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false } } }],
      tool_choice: { type: "function", function: { name: "f" } }, max_tokens: 9, stop: "E", temperature: 1.5, response_format: { type: "json_object" },
      providerOptions: { gem: { thinkingBudget: 0.01 } },
    }, target);
    expect(body).toEqual({
      contents: [{ role: "user", parts: [{ text: "q" }, { inlineData: { mimeType: "image/png", data: "AA" } }] }],
      systemInstruction: { parts: [{ text: "S" }] },
      tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "object", properties: { a: { type: "string" } } } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["f"] } },
      generationConfig: { temperature: 1.5, maxOutputTokens: 9, stopSequences: ["E"], responseMimeType: "application/json", thinkingConfig: { thinkingBudget: 4000 } },
    });
  });

  it("a blocked prompt (no candidates) is content_filter", () => {
    const r: any = geminiToChatResponse({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }, "g");
    expect(r.choices[0].finish_reason).toBe("content_filter");
    expect(r.usage.prompt_tokens).toBe(3);
  });

  it("a function call's thoughtSignature rides in the tool-call id and is replayed on the next request", () => {
    const sig = "+/8BAgP+EA==";
    const id = toolCallId({ functionCall: {}, thoughtSignature: sig });
    expect(id).toMatch(/^call_[0-9a-f]+__sig__[A-Za-z0-9_-]+$/);
    expect(signatureOf(id)).toBe(sig);
    const { body } = chatToGeminiRequest({ messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: id, content: "r" },
    ] }, target);
    expect((body.contents as any)[1].parts[0]).toEqual({ functionCall: { name: "f", args: {} }, thoughtSignature: sig });
  });
});

describe("chat -> gemini tool turns", () => {
  const target = { modelId: "google/g", provider: "gem", upstreamModel: "g", pricing: {} };
  it("tool answers in another order than the calls go back in the calls' order, user text after them", () => {
    const call = (id: string, name: string) => ({ id, type: "function", function: { name, arguments: "{}" } });
    const { body } = chatToGeminiRequest({ messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [call("a", "f"), call("b", "g")] },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "tool", tool_call_id: "a", content: "A" },
      { role: "user", content: "and?" },
    ] }, target);
    expect((body.contents as any)[2]).toEqual({ role: "user", parts: [
      { functionResponse: { name: "f", response: { name: "f", content: "A" } } },
      { functionResponse: { name: "g", response: { name: "g", content: "B" } } },
      { text: "and?" },
    ] });
  });
});

describe("a grounded Gemini stream's sources", () => {
  const piece = "abcdefghij".repeat(5);
  /** n chunks of 50 characters, each grounded over all the text so far (as a long answer's chunks can be). */
  const grounded = (n: number) => [
    ...Array.from({ length: n }, (_, i) => ({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: piece }] }, groundingMetadata: { groundingChunks: [{ web: { uri: "https://a.example/", title: "A" } }], groundingSupports: [{ segment: { endIndex: (i + 1) * 50 }, groundingChunkIndices: [0] }] } }] })),
    { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" }] },
  ];
  const run = (chunks: unknown[]) => {
    const t = new GeminiToChatStream({ includeUsage: false, provider: "gem", model: "gemini", search: true });
    const out = chunks.flatMap((c) => t.push({ data: JSON.stringify(c) }));
    return [...out, ...t.end()].filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data).choices[0]);
  };
  /** Characters of text read to convert the offsets (String.prototype.charCodeAt calls), for an answer of n chunks. */
  const charsRead = (n: number) => {
    const chunks = grounded(n);
    const spy = vi.spyOn(String.prototype, "charCodeAt");
    try {
      run(chunks);
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  };

  it("cost the answer's length, not its length times its chunks: twice the chunks read about twice the text", () => {
    const once = charsRead(100), twice = charsRead(200);
    expect(once).toBeGreaterThan(0);
    expect(twice / once).toBeLessThan(2.5);
  });

  it("keep the first 256 distinct sources and spans, in one delta before the finish", () => {
    const deltas = run(grounded(300).map((c: any, i) => {
      // Each chunk cites its own URL: 300 distinct sources.
      const g = c.candidates[0].groundingMetadata;
      if (g) g.groundingChunks[0].web.uri = `https://a.example/${i}`;
      return c;
    }));
    const annotated = deltas.filter((d) => d.delta.annotations);
    expect(annotated).toHaveLength(1);
    expect(annotated[0].delta.annotations).toHaveLength(256);
    expect(annotated[0].delta.annotations.at(-1).url_citation).toEqual({ start_index: 0, end_index: 256 * 50, url: "https://a.example/255", title: "A" });
    expect(deltas.indexOf(annotated[0])).toBe(deltas.length - 2);
  });

  it("a chunk index that is not an integer number cites nothing, and a repeat is one annotation, as in the JSON answer", () => {
    const g = { groundingChunks: [{ web: { uri: "https://a.example/", title: "A" } }], groundingSupports: [{ segment: { endIndex: 5 }, groundingChunkIndices: [0, "0", 0, 0.5] }] };
    const cand = { index: 0, content: { role: "model", parts: [{ text: "Paris" }] }, finishReason: "STOP", groundingMetadata: g };
    const want = [{ type: "url_citation", url_citation: { start_index: 0, end_index: 5, url: "https://a.example/", title: "A" } }];
    expect(run([{ candidates: [cand] }]).find((d) => d.delta.annotations).delta.annotations).toEqual(want);
    expect((geminiToChatResponse({ candidates: [cand] }, "gemini-x") as any).choices[0].message.annotations).toEqual(want);
  });

  it("sources in the finishing chunk go in the one delta before the finish; a chunk after it adds no second one", () => {
    const g = (uri: string) => ({ groundingChunks: [{ web: { uri, title: "A" } }], groundingSupports: [{ segment: { endIndex: 5 }, groundingChunkIndices: [0] }] });
    const deltas = run([
      { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Par" }] }, groundingMetadata: g("https://a.example/") }] },
      { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "is" }] }, finishReason: "STOP", groundingMetadata: g("https://b.example/") }] },
      { candidates: [{ index: 0, groundingMetadata: g("https://c.example/") }] },
    ]);
    const annotated = deltas.filter((d) => d.delta.annotations);
    expect(annotated.map((d) => d.delta.annotations.map((a: any) => a.url_citation.url))).toEqual([["https://a.example/", "https://b.example/"]]);
    expect(deltas.indexOf(annotated[0])).toBe(deltas.length - 2);
    expect(deltas.at(-1).finish_reason).toBe("stop");
  });

  /** The chunks a stream gives for `chunks` without the upstream's end (it stalls after them). */
  const beforeEnd = (chunks: unknown[]) => {
    const t = new GeminiToChatStream({ includeUsage: false, provider: "gem", model: "gemini", search: true });
    return chunks.flatMap((c) => t.push({ data: JSON.stringify(c) })).map((e) => JSON.parse(e.data).choices[0]);
  };
  const g = { groundingChunks: [{ web: { uri: "https://a.example/", title: "A" } }], groundingSupports: [{ segment: { endIndex: 5 }, groundingChunkIndices: [0] }] };

  it("a finished answer's sources and finish go out with the chunk that finished it, before the upstream's end", () => {
    const deltas = beforeEnd([
      { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Paris" }] } }] },
      { candidates: [{ index: 0, content: { role: "model", parts: [{ text: " is it." }] }, finishReason: "STOP", groundingMetadata: g }] },
    ]);
    expect(deltas.map((d) => d.delta.content ?? "").join("")).toBe("Paris is it.");
    expect(deltas.at(-2).delta.annotations).toEqual([{ type: "url_citation", url_citation: { start_index: 0, end_index: 5, url: "https://a.example/", title: "A" } }]);
    expect(deltas.at(-1)).toMatchObject({ delta: {}, finish_reason: "stop" });
  });

  it("with two candidates, the finishes wait until both have one", () => {
    const one = beforeEnd([{ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Paris" }] }, finishReason: "STOP", groundingMetadata: g }, { index: 1, content: { role: "model", parts: [{ text: "Par" }] } }] }]);
    expect(one.filter((d) => d.finish_reason)).toEqual([]);
    const both = beforeEnd([
      { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Paris" }] }, finishReason: "STOP", groundingMetadata: g }, { index: 1, content: { role: "model", parts: [{ text: "Par" }] } }] },
      { candidates: [{ index: 1, content: { role: "model", parts: [{ text: "is" }] }, finishReason: "STOP" }] },
    ]);
    expect(both.filter((d) => d.finish_reason).map((d) => [d.index, d.finish_reason])).toEqual([[0, "stop"], [1, "stop"]]);
  });
});
