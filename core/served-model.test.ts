import { describe, expect, it, vi } from "vitest";
import { nameJsonModel, StreamModelNamer } from "./served-model.ts";

const GW = "anthropic/claude-sonnet-4.5";

describe("nameJsonModel", () => {
  it("names the gateway id and returns the upstream's own", () => {
    const body = { id: "msg_1", type: "message", model: "claude-sonnet-4-5-20250929", content: [] };
    expect(nameJsonModel(body, GW)).toBe("claude-sonnet-4-5-20250929");
    expect(body.model).toBe(GW);
  });

  it("adds the id to an answer that had none; nothing to return then, nor when it already was the gateway's", () => {
    const body: Record<string, unknown> = { object: "chat.completion", choices: [] };
    expect(nameJsonModel(body, GW)).toBeUndefined();
    expect(body.model).toBe(GW);
    expect(nameJsonModel({ model: GW }, GW)).toBeUndefined();
  });
});

describe("StreamModelNamer, chat chunks (every chunk names the model; spliced as text)", () => {
  const chunk = (model: unknown, content = "Hi") =>
    JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] });

  it("every chunk names the gateway id; the upstream's own is remembered from the first", () => {
    const n = new StreamModelNamer("chat", GW);
    const out = [chunk("gpt-4o-mini-2024-07-18"), chunk("gpt-4o-mini-2024-07-18", " there")].map((data) => n.rename({ data }));
    expect(out.map((e) => JSON.parse(e.data).model)).toEqual([GW, GW]);
    expect(JSON.parse(out[1]!.data).choices[0].delta.content).toBe(" there");
    expect(n.upstreamModel).toBe("gpt-4o-mini-2024-07-18");
  });

  it("whitespace around the colon, an empty first model (Azure's content-filter chunk), escapes in the value", () => {
    const n = new StreamModelNamer("chat", GW);
    expect(JSON.parse(n.rename({ data: '{"id":"x","model" : "", "choices":[]}' }).data).model).toBe(GW);
    expect(n.upstreamModel).toBeUndefined();
    expect(JSON.parse(n.rename({ data: '{"model":"a\\"b\\\\","choices":[]}' }).data)).toEqual({ model: GW, choices: [] });
    expect(n.upstreamModel).toBe('a"b\\');
  });

  it("text that looks like a model field inside content is left alone; only the chunk's own key is named", () => {
    const n = new StreamModelNamer("chat", GW);
    const data = chunk("gpt-4o", 'say "model":"evil"');
    const out = JSON.parse(n.rename({ data }).data);
    expect(out.model).toBe(GW);
    expect(out.choices[0].delta.content).toBe('say "model":"evil"');
    const contentFirst = JSON.stringify({ choices: [{ delta: { content: '"model": "x"' } }], model: "gpt-4o" });
    expect(JSON.parse(n.rename({ data: contentFirst }).data)).toEqual({ choices: [{ delta: { content: '"model": "x"' } }], model: GW });
  });

  it("an event already naming the gateway id, [DONE] and an error event pass as the same object", () => {
    const n = new StreamModelNamer("chat", GW);
    for (const ev of [{ data: chunk(GW) }, { data: "[DONE]" }, { data: '{"error":{"code":"UPSTREAM_ERROR","message":"x"}}' }, { data: '{"model":null}' }]) {
      expect(n.rename(ev)).toBe(ev);
    }
  });
});

describe("StreamModelNamer, messages and responses (only the events carrying the whole message / response)", () => {
  it("message_start names the gateway id; the other events are the same objects", () => {
    const n = new StreamModelNamer("messages", GW);
    const start = { event: "message_start", data: JSON.stringify({ type: "message_start", message: { id: "msg_1", type: "message", model: "claude-sonnet-4-5-20250929", content: [], usage: { input_tokens: 3, output_tokens: 1 } } }) };
    const out = n.rename(start);
    expect(out.event).toBe("message_start");
    expect(JSON.parse(out.data).message).toMatchObject({ id: "msg_1", model: GW, usage: { input_tokens: 3 } });
    expect(n.upstreamModel).toBe("claude-sonnet-4-5-20250929");
    const delta = { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\"model\\":\\"x\\""}}' };
    expect(n.rename(delta)).toBe(delta);
    // Without an event: line (a translator's own events), the type in the data says it.
    expect(JSON.parse(n.rename({ data: '{"type":"message_start","message":{"model":"m"}}' }).data).message.model).toBe(GW);
  });

  it("responses: created, in_progress, completed... name the gateway id; deltas are untouched", () => {
    const n = new StreamModelNamer("responses", "openai/gpt-5");
    for (const type of ["response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed", "response.queued"]) {
      const out = n.rename({ event: type, data: JSON.stringify({ type, sequence_number: 0, response: { id: "resp_1", object: "response", model: "gpt-5-2025-08-07" } }) });
      expect(JSON.parse(out.data).response.model).toBe("openai/gpt-5");
    }
    expect(n.upstreamModel).toBe("gpt-5-2025-08-07");
    const delta = { event: "response.output_text.delta", data: '{"type":"response.output_text.delta","delta":"hi"}' };
    expect(n.rename(delta)).toBe(delta);
  });

  it("what a translator keeps on the event object (the full response, under a symbol) stays with it", () => {
    const FULL = Symbol.for("model-gateway.responses.full");
    const ev = { event: "response.completed", data: '{"type":"response.completed","response":{"model":"claude-x","output":[]}}' };
    Object.defineProperty(ev, FULL, { value: { output: [{ type: "reasoning" }] }, enumerable: false });
    const out = new StreamModelNamer("responses", GW).rename(ev) as any;
    expect(JSON.parse(out.data).response.model).toBe(GW);
    expect(out[FULL]).toEqual({ output: [{ type: "reasoning" }] });
  });

  it("a broken event is passed on as it came (the relay reports it)", () => {
    const ev = { event: "message_start", data: "{not json" };
    expect(new StreamModelNamer("messages", GW).rename(ev)).toBe(ev);
  });
});

describe("Gemini answers name the model in modelVersion", () => {
  const G = "google/gemini-2.5-flash";

  it("JSON: modelVersion becomes the gateway id and the upstream's is returned; `model` is not Gemini's field", () => {
    const body: Record<string, unknown> = { candidates: [], modelVersion: "gemini-2.5-flash-preview-05-20" };
    expect(nameJsonModel(body, G, "gemini")).toBe("gemini-2.5-flash-preview-05-20");
    expect(body).toEqual({ candidates: [], modelVersion: G });
  });

  it("stream: every event's top-level modelVersion is spliced; the upstream's remembered from the first", () => {
    const n = new StreamModelNamer("gemini", G);
    const ev = (text: string) => ({ data: JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }], usageMetadata: { promptTokenCount: 3 }, modelVersion: "gemini-2.5-flash-001", responseId: "r" }) });
    const out = [ev("Hi"), ev(" there")].map((e) => JSON.parse(n.rename(e).data));
    expect(out.map((e) => e.modelVersion)).toEqual([G, G]);
    expect(out[1].candidates[0].content.parts[0].text).toBe(" there");
    expect(n.upstreamModel).toBe("gemini-2.5-flash-001");
  });

  it("a function call's args with a modelVersion key of their own, and text that looks like one, are left alone", () => {
    const n = new StreamModelNamer("gemini", G);
    const data = JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: '"modelVersion":"x"' }, { functionCall: { name: "deploy", args: { modelVersion: "v2", list: [{ modelVersion: "v3" }] } } }] }, index: 0 }], modelVersion: "gemini-up" });
    expect(JSON.parse(n.rename({ data }).data)).toEqual({ ...JSON.parse(data), modelVersion: G });
    expect(n.upstreamModel).toBe("gemini-up");
    // An event naming no model (only args do) is passed on as it came.
    const argsOnly = { data: JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: "f", args: { modelVersion: "v2" } } }] } }] }) };
    expect(new StreamModelNamer("gemini", G).rename(argsOnly)).toBe(argsOnly);
  });

  it("modelVersion first, and a later args key or text that ends like the key: only the event's own is named", () => {
    const n = new StreamModelNamer("gemini", G);
    const data = JSON.stringify({ modelVersion: "gemini-up", candidates: [{ content: { parts: [{ text: 'he said "modelVersion' }, { functionCall: { name: "f", args: { modelVersion: "v2" } } }] } }], responseId: "r" });
    expect(JSON.parse(n.rename({ data }).data)).toEqual({ ...JSON.parse(data), modelVersion: G });
    expect(n.upstreamModel).toBe("gemini-up");
    const spaced = '{ "candidates" : [ ] , "modelVersion" : "gemini-up" , "responseId" : "r" }\r\n';
    expect(JSON.parse(n.rename({ data: spaced }).data)).toEqual({ candidates: [], modelVersion: G, responseId: "r" });
    const unnamed = { data: '{"candidates":[],"modelVersion":null}' };
    expect(n.rename(unnamed)).toBe(unnamed);
  });

  it("a large function-call event is not read character by character: only what follows its modelVersion is", () => {
    const args = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`field_${i}`, { value: "x".repeat(60), list: [i, { nested: "y".repeat(20) }] }]));
    const data = JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "deploy", args } }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 200, totalTokenCount: 230 }, modelVersion: "gemini-2.5-flash-001", responseId: "abcdefghijklmnopqrstuvw" });
    expect(data.length).toBeGreaterThan(6000);
    const n = new StreamModelNamer("gemini", G);
    const reads = vi.spyOn(String.prototype, "charCodeAt");
    let out: string;
    let read: number;
    try {
      out = n.rename({ data }).data;
    } finally {
      read = reads.mock.calls.length; // mockRestore clears the calls
      reads.mockRestore();
    }
    expect(JSON.parse(out).modelVersion).toBe(G);
    // The tail after modelVersion is some 50 characters; the whole event is thousands.
    expect(read).toBeLessThan(200);
  });
});
