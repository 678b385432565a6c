import { describe, expect, it } from "vitest";
import { relayChatStream } from "./stream.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { Usage } from "../types.ts";

async function* events(list: SseEvent[]) {
  yield* list;
}

const chunk = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}';
const usageChunk = '{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":4}}}';

async function collect(wantUsage: boolean, list: SseEvent[]) {
  const usage: Usage[] = [];
  let firsts = 0;
  const out: SseEvent[] = [];
  for await (const e of relayChatStream(events(list), wantUsage, { reportUsage: (u) => usage.push(u), reportFirstToken: () => firsts++ }, "up")) out.push(e);
  return { out, usage, firsts };
}

describe("relayChatStream", () => {
  it("passes events through untouched (same objects) and reports usage from the usage chunk", async () => {
    const list = [{ data: chunk }, { data: usageChunk }, { data: "[DONE]" }];
    const { out, usage, firsts } = await collect(true, list);
    expect(out).toEqual(list);
    expect(out[0]).toBe(list[0]);
    expect(usage).toEqual([{ inputTokens: 6, cacheReadTokens: 4, outputTokens: 3 }]);
    expect(firsts).toBe(1);
  });

  it("drops the usage chunk when the client did not ask for it, but still meters it", async () => {
    const { out, usage } = await collect(false, [{ data: chunk }, { data: usageChunk }, { data: "[DONE]" }]);
    expect(out.map((e) => e.data)).toEqual([chunk, "[DONE]"]);
    expect(usage).toHaveLength(1);
  });

  it("turns a stream that ends without [DONE] into an UPSTREAM_ERROR", async () => {
    await expect(collect(true, [{ data: chunk }])).rejects.toMatchObject({ code: "UPSTREAM_ERROR", status: 502 });
  });
});
