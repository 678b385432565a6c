import { describe, expect, it } from "vitest";
import type { Usage } from "../../../core/contracts/provider.ts";
import { chatToGemini } from "./index.ts";
import { messagesToGemini } from "../messages-to-gemini/index.ts";

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

  it("streams: usage reported from the first chunk that has it and again at the end; messages clients get messages events", async () => {
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
    expect(usage.map((u) => [u.inputTokens, u.outputTokens])).toEqual([[4, 0], [4, 3]]);
  });
});
