import { describe, expect, it } from "vitest";
import type { Usage } from "../../../core/contracts/provider.ts";
import { chatToGemini } from "./index.ts";
import { messagesToGemini } from "../messages-to-gemini/index.ts";
import { GatewayError } from "../../../core/errors.ts";

const target = { modelId: "g/x", provider: "gem", upstreamModel: "gemini-x", pricing: {} } as any;
const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: "gemini", provider: "gem" };
function callFor(usage: Usage[]) {
  return { signal: new AbortController().signal, requestId: "r", clientHeaders: {}, reportUsage: (u: Usage) => usage.push(u), reportFirstToken() {} };
}
async function* sse(list: unknown[]) { for (const d of list) yield { data: JSON.stringify(d) }; }
const text = (t: string, extra: Record<string, unknown> = {}) => ({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: t }] }, ...extra }] });

describe("chat -> gemini translator", () => {
  it("picks the Gemini op by stream and reports usage out of the JSON answer", () => {
    const usage: Usage[] = [];
    const t = chatToGemini.request({ model: "g/x", messages: [{ role: "user", content: "q" }], logit_bias: { 1: 1 } }, target, opts);
    expect(t.op).toBe("generateContent");
    expect(t.dropped).toEqual(["logit_bias"]);
    const out: any = chatToGemini.response({ ...text("hi", { finishReason: "STOP" }), usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } }, t.state, callFor(usage) as any);
    expect(out.choices[0].message.content).toBe("hi");
    expect(usage).toEqual([expect.objectContaining({ inputTokens: 4, outputTokens: 2 })]);
  });

  it("streams: usage is the driver's to report (per upstream read: codecs/gemini/answer.ts), not the translator's; messages clients get messages events", async () => {
    const usage: Usage[] = [];
    const t = messagesToGemini.request({ model: "g/x", max_tokens: 9, stream: true, messages: [{ role: "user", content: "q" }] }, target, opts);
    expect(t.op).toBe("streamGenerateContent");
    const events = messagesToGemini.stream(sse([
      { ...text("he"), usageMetadata: { promptTokenCount: 4 } },
      { ...text("y", { finishReason: "STOP" }), usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3 } },
    ]), t.state, callFor(usage) as any);
    const types: string[] = [];
    for await (const e of events) types.push(e.event ?? JSON.parse(e.data).type);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(usage).toEqual([]);
  });

  it("parallel_tool_calls: false keeps only the first of Gemini's calls, in JSON answers and streams", async () => {
    const calls = { candidates: [{ index: 0, finishReason: "STOP", content: { role: "model", parts: [
      { functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "c2ln" }, { functionCall: { name: "g", args: {} } },
    ] } }] };
    const ask = (extra: Record<string, unknown>) => chatToGemini.request({ model: "g/x", messages: [{ role: "user", content: "q" }], tools: [], ...extra }, target, opts);
    const one = ask({ parallel_tool_calls: false });
    expect(one.dropped).toEqual([]);
    const json: any = chatToGemini.response(calls, one.state, callFor([]) as any);
    expect(json.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(["f"]);
    expect(json.choices[0].message.tool_calls[0].id).toMatch(/__sig__c2ln$/);
    expect(json.choices[0].finish_reason).toBe("tool_calls");
    const both: any = chatToGemini.response(calls, ask({}).state, callFor([]) as any);
    expect(both.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(["f", "g"]);

    const streamed: string[] = [];
    let finish;
    for await (const e of chatToGemini.stream(sse([calls]), ask({ parallel_tool_calls: false, stream: true }).state, callFor([]) as any)) {
      if (e.data === "[DONE]") continue;
      const c = JSON.parse(e.data).choices[0];
      for (const tc of c?.delta?.tool_calls ?? []) streamed.push(`${tc.index}:${tc.function.name}`);
      finish = c?.finish_reason ?? finish;
    }
    expect(streamed).toEqual(["0:f"]);
    expect(finish).toBe("tool_calls");
  });
});

describe("a grounded Gemini stream (chat's web_search_options as googleSearch)", () => {
  const grounding = {
    groundingChunks: [{ web: { uri: "https://meteo.fr/paris", title: "meteo.fr" } }],
    groundingSupports: [{ segment: { startIndex: 8, endIndex: 28, text: "“beau” à Paris." }, groundingChunkIndices: [0] }],
  };
  async function annotationsOf(body: Record<string, unknown>) {
    const t = chatToGemini.request({ model: "g/x", stream: true, messages: [{ role: "user", content: "météo paris?" }], ...body }, target, opts);
    const events = chatToGemini.stream(sse([text("Il fait "), text("“beau” à Paris.", { finishReason: "STOP", groundingMetadata: grounding })]), t.state, callFor([]) as any);
    const chunks: any[] = [];
    for await (const e of events) if (e.data !== "[DONE]") chunks.push(JSON.parse(e.data));
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    return { content, chunks, annotations: chunks.filter((c) => c.choices[0]?.delta?.annotations) };
  }

  it("the sources arrive as url_citation annotations in one delta just before the finish, at UTF-16 indexes", async () => {
    const { content, chunks, annotations } = await annotationsOf({ web_search_options: {} });
    expect(annotations.map((c) => c.choices[0].delta.annotations)).toEqual([[{ type: "url_citation", url_citation: { start_index: 8, end_index: 23, url: "https://meteo.fr/paris", title: "meteo.fr" } }]]);
    expect(content.slice(8, 23)).toBe("“beau” à Paris.");
    expect(chunks.indexOf(annotations[0])).toBe(chunks.length - 2);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
  });

  it("a request that asked for no search keeps no text and sends no annotations", async () => {
    expect((await annotationsOf({})).annotations).toEqual([]);
  });

  it("a candidate that finished keeps its sources and finish when the upstream fails while another still streams", async () => {
    const t = chatToGemini.request({ model: "g/x", stream: true, n: 2, messages: [{ role: "user", content: "météo paris?" }], web_search_options: {} }, target, opts);
    async function* failing() {
      yield* sse([{ candidates: [
        { index: 0, content: { role: "model", parts: [{ text: "Il fait “beau” à Paris." }] }, finishReason: "STOP", groundingMetadata: grounding },
        { index: 1, content: { role: "model", parts: [{ text: "Il fait" }] } },
      ] }]);
      throw new Error("upstream went away");
    }
    const chunks: any[] = [];
    await expect((async () => {
      for await (const e of chatToGemini.stream(failing(), t.state, callFor([]) as any)) chunks.push(JSON.parse(e.data));
    })()).rejects.toThrow();
    const first = chunks.map((c) => c.choices[0]).filter((c) => c.index === 0);
    expect(first.filter((c) => c.delta.annotations).map((c) => c.delta.annotations[0].url_citation.url)).toEqual(["https://meteo.fr/paris"]);
    expect(first.at(-1).finish_reason).toBe("stop");
    expect(chunks.map((c) => c.choices[0]).filter((c) => c.index === 1 && c.finish_reason)).toEqual([]);
  });
});

describe("an upstream that stalls or breaks off after every candidate finished", () => {
  const stalled = new GatewayError(504, "UPSTREAM_TIMEOUT", "Provider gem sent nothing more within 1500 ms", { retryable: true });
  /** The client's events for `chunks` followed by a read that fails with `err`, and the usage reported. */
  async function relayed(chunks: unknown[], err: unknown, body: Record<string, unknown> = {}, signal = new AbortController().signal) {
    const t = chatToGemini.request({ model: "g/x", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "q" }], ...body }, target, opts);
    async function* upstream() {
      yield* sse(chunks);
      throw err;
    }
    const usage: Usage[] = [];
    const data: string[] = [];
    try {
      for await (const e of chatToGemini.stream(upstream(), t.state, { ...callFor(usage), signal } as any)) data.push(e.data);
    } catch (e) {
      return { data, usage, error: e };
    }
    return { data, usage, error: undefined };
  }
  const usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 30, totalTokenCount: 35 };

  it("ends normally: the finish, the upstream's usage chunk, then [DONE], grounded or not", async () => {
    for (const body of [{}, { web_search_options: {} }]) {
      const r = await relayed([text("Paris"), text(" it is.", { finishReason: "STOP" }), { usageMetadata }], stalled, body);
      expect(r.error).toBeUndefined();
      expect(r.data.at(-1)).toBe("[DONE]");
      const chunks = r.data.slice(0, -1).map((d) => JSON.parse(d));
      expect(chunks.flatMap((c) => c.choices).map((c: any) => c.delta.content ?? "").join("")).toBe("Paris it is.");
      expect(chunks.flatMap((c) => c.choices).at(-1).finish_reason).toBe("stop");
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 30 } });
    }
  });

  it("a connection broken off after the finish ends the same way; one before a candidate finished is still the failure", async () => {
    const reset = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    expect((await relayed([text("Paris.", { finishReason: "STOP" })], reset)).data.at(-1)).toBe("[DONE]");
    const cut = await relayed([text("Par")], stalled);
    expect(cut.error).toMatchObject({ code: "UPSTREAM_TIMEOUT" });
    expect(cut.data).not.toContain("[DONE]");
    const one = await relayed([{ candidates: [{ index: 0, content: { parts: [{ text: "a" }] }, finishReason: "STOP" }, { index: 1, content: { parts: [{ text: "b" }] } }] }], stalled, { n: 2 });
    expect(one.error).toMatchObject({ code: "UPSTREAM_TIMEOUT" });
  });

  it("n: 2 with only the first choice finished: a stall or a break is still the failure, not the end", async () => {
    const reset = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    const zero = text("Answer zero.", { finishReason: "STOP" });
    for (const err of [stalled, reset]) {
      const r = await relayed([zero, { usageMetadata }], err, { n: 2 });
      expect(r.error).toBeDefined();
      expect(r.data).not.toContain("[DONE]");
      expect(r.data.map((d) => JSON.parse(d)).filter((c) => c.usage)).toEqual([]); // no usage chunk
    }
    // Both requested choices finished: the stall is the end.
    const one = { candidates: [{ index: 1, content: { parts: [{ text: "Answer one." }] }, finishReason: "STOP" }] };
    const both = await relayed([zero, one, { usageMetadata }], stalled, { n: 2 });
    expect(both.error).toBeUndefined();
    expect(both.data.at(-1)).toBe("[DONE]");
    expect(both.data.map((d) => JSON.parse(d === "[DONE]" ? "{}" : d)).flatMap((c) => c.choices ?? []).filter((c: any) => c.finish_reason).map((c: any) => c.index)).toEqual([0, 1]);
  });

  it("without any usage from the upstream the usage chunk claims no figures (usage null), not 0 tokens", async () => {
    const r = await relayed([text("Paris.", { finishReason: "STOP" })], stalled);
    expect(r.data.at(-1)).toBe("[DONE]");
    expect(JSON.parse(r.data.at(-2)!)).toMatchObject({ choices: [], usage: null });
    // The same at the upstream's EOF.
    const t = chatToGemini.request({ model: "g/x", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "q" }] }, target, opts);
    const data: string[] = [];
    for await (const e of chatToGemini.stream(sse([text("Paris.", { finishReason: "STOP" })]), t.state, callFor([]) as any)) data.push(e.data);
    expect(JSON.parse(data.at(-2)!)).toMatchObject({ choices: [], usage: null });
  });

  it("the client leaving is still the request's abort, not an ending", async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await relayed([text("Paris.", { finishReason: "STOP" })], new Error("aborted"), {}, ac.signal);
    expect(r.error).toBeDefined();
    expect(r.data).not.toContain("[DONE]");
  });

  it("a Messages client gets message_stop", async () => {
    const t = messagesToGemini.request({ model: "g/x", max_tokens: 9, stream: true, messages: [{ role: "user", content: "q" }] }, target, opts);
    async function* upstream() {
      yield* sse([{ ...text("Paris.", { finishReason: "STOP" }), usageMetadata }]);
      throw stalled;
    }
    const types: string[] = [];
    for await (const e of messagesToGemini.stream(upstream(), t.state, callFor([]) as any)) types.push(e.event ?? JSON.parse(e.data).type);
    expect(types.at(-1)).toBe("message_stop");
  });
});
