import { describe, expect, it } from "vitest";
import type { Usage } from "../../../core/contracts/provider.ts";
import { encodeReasoning } from "../responses-to-chat/reasoning.ts";
import { GatewayError } from "../../../core/errors.ts";
import { geminiNative, SKIP_SIGNATURE } from "./index.ts";

const target = { modelId: "google/g", provider: "gem", upstreamModel: "gemini-x", pricing: {} } as any;
const opts = { cacheMarkers: false, cacheAuto: false, driverProtocol: "gemini", provider: "gem" };
const call = (usage: Usage[]) => ({ signal: new AbortController().signal, requestId: "r", clientHeaders: {}, reportUsage: (u: Usage) => usage.push(u), reportFirstToken() {} }) as any;

describe("Gemini client -> Gemini upstream (native)", () => {
  it("takes out what the gateway added and the reasoning it encoded for another upstream; picks the op by stream", () => {
    const blob = encodeReasoning("messages", [{ type: "reasoning.text", text: "t", signature: "s" }]);
    const body = {
      model: "google/g", stream: true, providerOptions: { gateway: { order: ["gem"] } }, safetySettings: [], unknownField: 1,
      contents: [{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [{ text: "a", thoughtSignature: blob }, { functionCall: { name: "f", args: {} }, thoughtSignature: blob }] }, { role: "user", parts: [{ functionResponse: { name: "f", response: {} } }] }],
    };
    const t = geminiNative.request(body, target, opts);
    expect(t.op).toBe("streamGenerateContent");
    expect(t.body).toEqual({ safetySettings: [], unknownField: 1, contents: [body.contents[0], { role: "model", parts: [{ text: "a" }, { functionCall: { name: "f", args: {} }, thoughtSignature: SKIP_SIGNATURE }] }, body.contents[2]] });
    const plain = { model: "google/g", contents: [{ parts: [{ text: "q" }] }] };
    const p = geminiNative.request(plain, target, opts);
    expect(p.op).toBe("generateContent");
    expect((p.body as any).contents).toBe(plain.contents); // untouched when there is nothing to take out
  });

  it("a model turn whose blob rode on its text (Claude -> Gemini) gets the placeholder on its unsigned first call", () => {
    // What a Gemini client hands back after a Claude turn: the thinking blob on the text before the calls.
    const blob = encodeReasoning("messages", [{ type: "reasoning.text", text: "t", signature: "s" }]);
    const calls = [{ functionCall: { name: "f", args: {} } }, { functionCall: { name: "g", args: {} } }];
    const body = { contents: [{ role: "user", parts: [{ text: "q" }] }, { role: "model", parts: [{ text: "a", thoughtSignature: blob }, ...calls] }] };
    const t = geminiNative.request(body, target, opts);
    expect((t.body as any).contents[1].parts).toEqual([{ text: "a" }, { ...calls[0], thoughtSignature: SKIP_SIGNATURE }, calls[1]]);
    // Gemini's own signature on the call is kept.
    const own = { contents: [body.contents[1]!].map((c) => ({ ...c, parts: [c.parts[0], { ...calls[0], thoughtSignature: "c2ln" }] })) };
    expect((geminiNative.request(own, target, opts).body as any).contents[0].parts[1].thoughtSignature).toBe("c2ln");
  });

  it("a model turn another model made without any reasoning (OpenAI, Claude without thinking) gets the placeholder too; signed and call-less turns are left as sent", () => {
    const unsigned = { role: "model", parts: [{ functionCall: { name: "f", args: {} } }, { functionCall: { name: "g", args: {} } }] };
    const signed = { role: "model", parts: [{ functionCall: { name: "h", args: {} }, thoughtSignature: "c2ln" }] };
    const answer = { role: "user", parts: [{ functionResponse: { name: "f", response: {} } }, { functionResponse: { name: "g", response: {} } }] };
    const body = { contents: [{ role: "user", parts: [{ text: "q" }] }, unsigned, answer, signed] };
    const out = (geminiNative.request(body, target, opts).body as any).contents;
    expect(out[1].parts).toEqual([{ functionCall: { name: "f", args: {} }, thoughtSignature: SKIP_SIGNATURE }, { functionCall: { name: "g", args: {} } }]);
    expect(out[2]).toBe(answer);
    expect(out[3]).toBe(signed);
    expect(body.contents[1]!.parts[0]).not.toHaveProperty("thoughtSignature"); // the client's body is not changed
  });

  it("reports usage and keeps the upstream's modelVersion (dispatch names the gateway model), JSON (a stream's usage is the driver's to report, per upstream read: codecs/gemini/answer.ts)", async () => {
    const usage: Usage[] = [];
    const out: any = geminiNative.response({ candidates: [], usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, thoughtsTokenCount: 3 }, modelVersion: "gemini-x" }, { provider: "gem" }, call(usage));
    expect(out.modelVersion).toBe("gemini-x");
    expect(usage).toEqual([{ inputTokens: 9, outputTokens: 5, reasoningTokens: 3 }]);

    const streamed: Usage[] = [];
    async function* upstream() {
      yield { data: '{"candidates": [{"content": {"parts": [{"text": "a"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9},"modelVersion": "gemini-x"}' };
      yield { data: '{"candidates": [{"content": {"parts": [{"text": "b"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 4},"modelVersion": "gemini-x"}' };
    }
    const events: any[] = [];
    for await (const e of geminiNative.stream(upstream(), { provider: "gem" }, call(streamed))) events.push(JSON.parse(e.data));
    expect(events.map((e) => e.modelVersion)).toEqual(["gemini-x", "gemini-x"]);
    expect(events[1].candidates[0].content.parts[0].text).toBe("b");
    expect(streamed).toEqual([]);
  });

  it("tool-use prompt tokens (googleSearch results) are input", async () => {
    const meta = { promptTokenCount: 1000, toolUsePromptTokenCount: 20_000, candidatesTokenCount: 500, totalTokenCount: 21_500 };
    const usage: Usage[] = [];
    geminiNative.response({ candidates: [], usageMetadata: meta }, { provider: "gem" }, call(usage));
    expect(usage).toEqual([{ inputTokens: 21_000, outputTokens: 500 }]);
  });

  it("an error object mid-stream is an upstream error", async () => {
    async function* upstream() { yield { data: '{"error": {"code": 500, "message": "boom", "status": "INTERNAL"}}' }; }
    const it = geminiNative.stream(upstream(), { provider: "gem" }, call([]))[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true });
  });

  it("an error about the request as the first event is the client's 400, as Google's HTTP 400 is: not retried", async () => {
    async function* upstream() { yield { data: JSON.stringify({ error: { code: 400, message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" } }) }; }
    const it = geminiNative.stream(upstream(), { provider: "gem" }, call([]))[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" }, message: expect.stringContaining("rejected the request: The input token count") });
  });

  it("a stream that ends before a finishReason was cut short: the events relayed, then a 502; a blocked prompt is an ending", async () => {
    const relayed = async (...data: string[]) => {
      async function* upstream() { for (const d of data) yield { data: d }; }
      const out: string[] = [];
      try {
        for await (const e of geminiNative.stream(upstream(), { provider: "gem" }, call([]))) out.push(e.data);
      } catch (err) {
        return { out, err };
      }
      return { out, err: undefined };
    };
    const cut = await relayed('{"candidates": [{"content": {"parts": [{"text": "a"}]},"index": 0}]}');
    expect(cut.out).toHaveLength(1);
    expect(cut.err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", message: expect.stringContaining("before a finish reason") });
    // Two candidates, one finished: still cut.
    expect((await relayed('{"candidates": [{"index": 0, "finishReason": "STOP"}, {"index": 1}]}')).err).toBeDefined();
    expect((await relayed()).err).toBeDefined();
    expect((await relayed('{"candidates": [{"content": {"parts": [{"text": "a"}]}}]}', '{"candidates": [{"finishReason": "STOP"}]}')).err).toBeUndefined();
    expect((await relayed('{"promptFeedback": {"blockReason": "SAFETY"}}')).err).toBeUndefined();
  });

  it("an upstream that stalls after every candidate finished ends the stream as its end would", async () => {
    const stalled = new GatewayError(504, "UPSTREAM_TIMEOUT", "Provider gem sent nothing more within 1500 ms", { retryable: true });
    const usage: Usage[] = [];
    async function* upstream(finish: boolean) {
      yield { data: JSON.stringify({ candidates: [{ content: { parts: [{ text: "a" }] }, index: 0, ...(finish ? { finishReason: "STOP" } : {}) }] }) };
      yield { data: JSON.stringify({ usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 30 } }) };
      throw stalled;
    }
    const out: string[] = [];
    for await (const e of geminiNative.stream(upstream(true), { provider: "gem" }, call(usage))) out.push(e.data);
    expect(out).toHaveLength(2);
    // Before the finish it is still the failure.
    await expect((async () => { for await (const _ of geminiNative.stream(upstream(false), { provider: "gem" }, call([]))); })()).rejects.toBe(stalled);
  });

  it("candidateCount 2 with only candidate 0 finished: a stall or a break is still the failure, not the end", async () => {
    const stalled = new GatewayError(504, "UPSTREAM_TIMEOUT", "Provider gem sent nothing more within 1500 ms", { retryable: true });
    const reset = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    const t = geminiNative.request({ contents: [{ parts: [{ text: "q" }] }], generationConfig: { candidateCount: 2 }, stream: true }, target, opts);
    const zero = { candidates: [{ index: 0, content: { parts: [{ text: "a" }] }, finishReason: "STOP" }] };
    const one = { candidates: [{ index: 1, content: { parts: [{ text: "b" }] }, finishReason: "STOP" }] };
    async function* upstream(chunks: unknown[], err: unknown) {
      for (const c of chunks) yield { data: JSON.stringify(c) };
      throw err;
    }
    for (const err of [stalled, reset]) {
      await expect((async () => { for await (const _ of geminiNative.stream(upstream([zero], err), t.state, call([]))); })()).rejects.toBe(err);
    }
    // Both finished: the stall is the end.
    const out: string[] = [];
    for await (const e of geminiNative.stream(upstream([zero, one], stalled), t.state, call([]))) out.push(e.data);
    expect(out).toHaveLength(2);
  });
});
