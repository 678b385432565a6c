import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { geminiAnswer } from "./answer.ts";
import type { CallOptions } from "../../../core/contracts/provider.ts";
import type { UpstreamResponse } from "../../http.ts";

const call = { reportUsage() {}, reportFirstToken() {}, signal: new AbortController().signal } as unknown as CallOptions;
const usageChunk = (text: string, meta: Record<string, number>) => JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0 }], usageMetadata: meta });
const chunk = (text: string) => JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0 }], modelVersion: "m" });

async function relayed(wire: string) {
  const res = { status: 200, headers: {}, body: Readable.from([Buffer.from(wire)]) } as unknown as UpstreamResponse;
  const answer = await geminiAnswer("ge", res, call, true);
  if (answer.kind !== "stream") throw new Error("not a stream");
  const out: string[] = [];
  try {
    for await (const ev of answer.events) out.push(ev.data);
  } catch (error) {
    return { out, error };
  }
  return { out, error: undefined };
}

describe("geminiAnswer, streamed", () => {
  it("relays the events as they came", async () => {
    expect(await relayed(`data: ${chunk("Hello")}\n\ndata: ${chunk(" there")}\n\n`)).toEqual({ out: [chunk("Hello"), chunk(" there")], error: undefined });
  });

  it("an event that is not JSON (`data: {not json` mid-stream) is never relayed: the provider's malformed answer, not a failure to reach it", async () => {
    const { out, error } = await relayed(`data: ${chunk("Hello")}\n\ndata: ${chunk(" there")}\n\ndata: {not json\n\ndata: ${chunk("!")}\n\n`);
    expect(out).toEqual([chunk("Hello"), chunk(" there")]);
    expect(error).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, message: "Provider ge sent a stream event that is not JSON", details: { provider: "ge", reason: "invalid_event" } });
  });
});

describe("geminiAnswer, streamed usage", () => {
  /** The answer's events in the given reads; the usage reported before each event was handed on. */
  async function reportedBefore(reads: string[], take: number) {
    const reported: Array<[number, number]> = [];
    const seen: Array<Array<[number, number]>> = [];
    const c = { ...call, reportUsage: (u: { inputTokens: number; outputTokens: number }) => reported.push([u.inputTokens, u.outputTokens]) } as unknown as CallOptions;
    const res = { status: 200, headers: {}, body: Readable.from(reads.map((r) => Buffer.from(r))) } as unknown as UpstreamResponse;
    const answer = await geminiAnswer("ge", res, c, true);
    if (answer.kind !== "stream") throw new Error("not a stream");
    const it = answer.events[Symbol.asyncIterator]();
    for (let i = 0; i < take; i++) {
      await it.next();
      seen.push([...reported]);
    }
    await it.return?.();
    return seen;
  }

  it("a read's last usageMetadata is reported before its first event goes on: a consumer that stops there leaves the final count", async () => {
    const wire = `data: ${usageChunk("Hel", { promptTokenCount: 20 })}\n\ndata: ${usageChunk("lo", { promptTokenCount: 20, candidatesTokenCount: 30 })}\n\n`;
    expect(await reportedBefore([wire], 1)).toEqual([[[20, 30]]]);
  });

  it("each read's usage in its turn: a later read's is not reported before that read arrives", async () => {
    const reads = [`data: ${usageChunk("Hel", { promptTokenCount: 20 })}\n\n`, `data: ${usageChunk("lo", { promptTokenCount: 20, candidatesTokenCount: 30 })}\n\n`];
    expect(await reportedBefore(reads, 2)).toEqual([[[20, 0]], [[20, 0], [20, 30]]]);
  });

  it("usage after an in-band error or an unreadable event in the read is not reported: the stream ends there", async () => {
    const wire = `data: ${usageChunk("Hel", { promptTokenCount: 20 })}\n\ndata: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\n\ndata: ${usageChunk("lo", { promptTokenCount: 20, candidatesTokenCount: 30 })}\n\n`;
    expect(await reportedBefore([wire], 1)).toEqual([[[20, 0]]]);
    const unreadable = `data: ${usageChunk("Hel", { promptTokenCount: 20 })}\n\ndata: {not json\n\ndata: ${usageChunk("lo", { promptTokenCount: 20, candidatesTokenCount: 30 })}\n\n`;
    expect(await reportedBefore([unreadable], 1)).toEqual([[[20, 0]]]);
  });
});

describe("geminiAnswer, streamed usage: when it is final", () => {
  async function finals(wire: string): Promise<boolean[]> {
    const flags: boolean[] = [];
    const c = { ...call, reportUsage: (_u: unknown, o?: { final?: boolean }) => flags.push(Boolean(o?.final)) } as unknown as CallOptions;
    const res = { status: 200, headers: {}, body: Readable.from([Buffer.from(wire)]) } as unknown as UpstreamResponse;
    const answer = await geminiAnswer("ge", res, c, true);
    if (answer.kind !== "stream") throw new Error("not a stream");
    for await (const _ of answer.events) void _;
    return flags;
  }
  const candidate = (index: number, finishReason?: string) => ({ content: { parts: [{ text: "x" }], role: "model" }, index, ...(finishReason ? { finishReason } : {}) });
  const at = (candidates: unknown[], candidatesTokenCount: number) => `data: ${JSON.stringify({ candidates, usageMetadata: { promptTokenCount: 20, candidatesTokenCount } })}\n\n`;

  it("the usage on the chunk that finishes a lone answer is final", async () => {
    expect(await finals(at([candidate(0, "STOP")], 30))).toEqual([true]);
  });

  it("with several candidates, the first to finish does not make the running count final", async () => {
    // candidateCount 2: candidate 0 finishes while candidate 1 is still being written (a running count of 3).
    expect(await finals(at([candidate(0, "STOP"), candidate(1)], 3))).toEqual([false]);
    expect(await finals(at([candidate(1, "STOP")], 600))).toEqual([false]); // not known to be the last: the estimate path
  });
});
