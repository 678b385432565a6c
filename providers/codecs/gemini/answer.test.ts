import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { geminiAnswer } from "./answer.ts";
import type { CallOptions } from "../../../core/contracts/provider.ts";
import type { UpstreamResponse } from "../../http.ts";

const call = { reportUsage() {}, reportFirstToken() {}, signal: new AbortController().signal } as unknown as CallOptions;
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
