// The shipped default (SQLite, full default pipeline, budgeted and rate-limited live key) under concurrent streams
// and clients that leave: 200 streams at once of every kind and pace must all END, each with its one ledger record;
// keep-alive connections are reused across streams; a client that disconnects mid-stream leaves the gateway healthy,
// its upstream request aborted and its ledger record marked aborted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { randomUUID } from "node:crypto";
import { SHIPPED_KEY, SHIPPED_PROJECT, startShipped, within, type Shipped } from "./helpers/shipped-config.ts";
import type { LedgerEntry } from "../core/store/types.ts";

const CHAT_MODEL = "openai/gpt-4o-mini";
const CLAUDE_MODEL = "anthropic/claude-sonnet-4.5";
/** A hang bound for one stream among 200 on a shared 2-core machine: generous, it only turns a hang into a failure. */
const ENDS_WITHIN = 20_000;

let s: Shipped;
let oai: OpenAI;
let claude: Anthropic;

beforeAll(async () => {
  s = await startShipped();
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: s.gw.baseURL, maxRetries: 0 });
  claude = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: s.gw.url + "/api", maxRetries: 0 });
});
afterAll(async () => {
  await s?.close();
});

const ledger = () => s.gw.gateway.store.ledger({ project: SHIPPED_PROJECT });
const tools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];

async function drainChat(body: Record<string, unknown>, requestId: string, signal?: AbortSignal): Promise<OpenAI.ChatCompletionChunk[]> {
  const stream = await oai.chat.completions.create({ model: CHAT_MODEL, ...body, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming, { headers: { "x-request-id": requestId }, signal });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

async function drainMessages(model: string, content: string, requestId: string): Promise<string[]> {
  const stream = await claude.messages.create({ model, max_tokens: 1000, stream: true, messages: [{ role: "user", content }] }, { headers: { "x-request-id": requestId } });
  const types: string[] = [];
  for await (const ev of stream) types.push(ev.type);
  return types;
}

/**
 * One stream of kind i % 8: every route a stream takes, burst / tail-burst / drip, include_usage on and off; every
 * fifth burst a long answer (300 words, more than a socket takes in one write).
 */
function oneStream(i: number, requestId: string): Promise<void> {
  const drip = `[pace:${5 + (i % 16)}]`;
  const burst = `[pace:burst]${i % 5 === 0 ? " [words:300]" : ""}`;
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`stream ${i} (${requestId}): ${what}`);
  };
  switch (i % 8) {
    case 0:
    case 1:
    case 2: {
      const pace = [burst, "[pace:tail]", drip][i % 8];
      const includeUsage = i % 2 === 0;
      return drainChat({ messages: [{ role: "user", content: `Hi ${pace}` }], ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }, requestId).then((chunks) => {
        check(chunks.some((c) => c.choices[0]?.finish_reason === "stop"), "no finish_reason");
        check(chunks.filter((c) => c.usage).length === (includeUsage ? 1 : 0), "usage chunk iff include_usage");
      });
    }
    case 3:
      return claude.messages.stream({ model: CHAT_MODEL, max_tokens: 1000, messages: [{ role: "user", content: `Hi ${i % 16 < 8 ? burst : "[pace:tail]"}` }] }, { headers: { "x-request-id": requestId } })
        .finalMessage().then((m) => check(m.stop_reason === "end_turn", `stop_reason ${m.stop_reason}`));
    case 4:
      return drainChat({ model: CLAUDE_MODEL, messages: [{ role: "user", content: `Hi ${i % 16 < 8 ? burst : drip}` }], stream_options: { include_usage: true } }, requestId)
        .then((chunks) => check(chunks.some((c) => c.usage), "no usage chunk"));
    case 5:
      return drainMessages(CLAUDE_MODEL, `Hi ${i % 16 < 8 ? burst : "[pace:tail]"}`, requestId).then((t) => check(t.at(-1) === "message_stop", "no message_stop"));
    case 6:
      return drainChat({ messages: [{ role: "user", content: "Weather? [pace:burst]" }], tools }, requestId)
        .then((chunks) => check(chunks.some((c) => c.choices[0]?.finish_reason === "tool_calls"), "no tool_calls finish"));
    default:
      return drainMessages(CLAUDE_MODEL, `Hi ${drip}`, requestId).then((t) => check(t.at(-1) === "message_stop", "no message_stop"));
  }
}

/** Polls (the record of a cut stream is written when the gateway notices the client left). */
async function eventually<T>(read: () => Promise<T | undefined> | T | undefined, what: string, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("200 concurrent streams through the full default pipeline on SQLite", () => {
  it("every one ENDS (each client's read completes), and each has exactly one ok ledger record with usage", async () => {
    const before = (await ledger()).length;
    const ids = Array.from({ length: 200 }, (_, i) => `load-${i}-${randomUUID()}`);
    const results = await Promise.allSettled(ids.map((id, i) => within(oneStream(i, id), ENDS_WITHIN, `stream ${i} (kind ${i % 8})`)));
    const failed = results.map((r, i) => (r.status === "rejected" ? `${i}: ${String(r.reason)}` : undefined)).filter(Boolean);
    expect(failed).toEqual([]);

    const entries = await ledger();
    expect(entries.length - before).toBe(200);
    const byId = new Map<string, LedgerEntry[]>();
    for (const e of entries) byId.set(e.requestId, [...(byId.get(e.requestId) ?? []), e]);
    for (const id of ids) {
      const mine = byId.get(id) ?? [];
      expect(mine, id).toHaveLength(1);
      expect(mine[0], id).toMatchObject({ outcome: "ok", status: 200, estimated: false });
      expect(mine[0]!.inputTokens, id).toBeGreaterThan(0);
      expect(mine[0]!.outputTokens, id).toBeGreaterThan(0);
    }
    expect((await fetch(`${s.gw.url}/healthz`)).status).toBe(200);
  }, 60_000);
});

describe("keep-alive reuse", () => {
  it("20 fast streams in a row (short and long bursts) through the openai client all end, and share the client's pooled connections", async () => {
    let connections = 0;
    const count = () => { connections++; };
    s.gw.server.on("connection", count);
    try {
      for (let i = 0; i < 20; i++) {
        const chunks = await within(drainChat({ messages: [{ role: "user", content: ["Hi [pace:burst]", "Hi [pace:tail]", "Hi [pace:burst] [words:300]"][i % 3] }], stream_options: { include_usage: true } }, `seq-${i}-${randomUUID()}`), ENDS_WITHIN, `sequential stream ${i}`);
        expect(chunks.at(-1)?.usage).toBeTruthy();
      }
    } finally {
      s.gw.server.off("connection", count);
    }
    // A stream that never ended would have pinned its connection and forced a new one for the next request.
    expect(connections).toBeLessThan(5);
  });
});

describe("clients that disconnect mid-stream", () => {
  const marker = () => `#${randomUUID()}`;
  const upstreamOf = (tag: string) => s.openai.requests.find((r) => JSON.stringify(r.body).includes(tag));
  const recordOf = async (id: string) => (await ledger()).find((e) => e.requestId === id);

  it("openai client leaving a chat stream: the upstream request is aborted, the ledger records it aborted (estimated), the gateway stays healthy", async () => {
    const id = `leave-chat-${randomUUID()}`;
    const tag = marker();
    const controller = new AbortController();
    let seen = 0;
    let finished = false;
    // The openai client ends its loop quietly (or throws) when its own signal aborts: either way the read stops.
    await within((async () => {
      const stream = await oai.chat.completions.create({ model: CHAT_MODEL, stream: true, messages: [{ role: "user", content: `Hi [pace:30] ${tag}` }] }, { headers: { "x-request-id": id }, signal: controller.signal });
      for await (const c of stream) {
        if (c.choices[0]?.finish_reason) finished = true;
        if (c.choices[0]?.delta?.content && ++seen === 2) controller.abort();
      }
    })().catch(() => {}), ENDS_WITHIN, "aborted chat stream");
    expect(seen).toBeGreaterThanOrEqual(2); // a chunk already buffered may still be yielded after the abort
    expect(finished).toBe(false);
    const e = await eventually(() => recordOf(id), "ledger record of the aborted stream");
    expect(e).toMatchObject({ outcome: "aborted", estimated: true, provider: "openai" });
    await eventually(() => upstreamOf(tag)?.abortedAt, "upstream request aborted");
    expect((await fetch(`${s.gw.url}/healthz`)).status).toBe(200);
  });

  it("Anthropic client leaving a translated (OpenAI-backed) Messages stream: the upstream request is aborted and recorded aborted", async () => {
    const id = `leave-msg-${randomUUID()}`;
    const tag = marker();
    const stream = claude.messages.stream({ model: CHAT_MODEL, max_tokens: 100, messages: [{ role: "user", content: `Hi [pace:30] ${tag}` }] }, { headers: { "x-request-id": id } });
    let deltas = 0;
    stream.on("text", () => { if (++deltas === 2) stream.abort(); });
    await expect(within(stream.done(), ENDS_WITHIN, "aborted messages stream")).rejects.toThrow();
    expect(deltas).toBeGreaterThanOrEqual(2);
    expect(await eventually(() => recordOf(id), "ledger record")).toMatchObject({ endpoint: "messages", outcome: "aborted" });
    await eventually(() => upstreamOf(tag)?.abortedAt, "upstream request aborted");
  });

  it("40 clients leaving at once at different points, native and translated: every upstream stream is cut, every record aborted, later streams still end", async () => {
    const abortedBefore = s.anthropic.aborted;
    const jobs = Array.from({ length: 40 }, (_, i) => {
      const id = `leave-many-${i}-${randomUUID()}`;
      const tag = marker();
      const leaveAfter = 1 + (i % 4);
      const native = i % 2 === 1;
      const controller = new AbortController();
      let reachedEnd = false;
      const run = (async () => {
        if (native) {
          const stream = await claude.messages.create({ model: CLAUDE_MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: `Hi [pace:30] ${tag}` }] }, { headers: { "x-request-id": id }, signal: controller.signal });
          let n = 0;
          for await (const ev of stream) {
            if (ev.type === "message_stop") reachedEnd = true;
            if (ev.type === "content_block_delta" && ++n === leaveAfter) controller.abort();
          }
        } else {
          let n = 0;
          const stream = await oai.chat.completions.create({ model: CHAT_MODEL, stream: true, messages: [{ role: "user", content: `Hi [pace:30] ${tag}` }] }, { headers: { "x-request-id": id }, signal: controller.signal });
          for await (const c of stream) {
            if (c.choices[0]?.finish_reason) reachedEnd = true;
            if (c.choices[0]?.delta?.content && ++n === leaveAfter) controller.abort();
          }
        }
      })().catch(() => {});
      return { id, tag, native, done: within(run.then(() => (reachedEnd ? "read to the end" : "left")), ENDS_WITHIN, `leaving stream ${i}`) };
    });
    expect(await Promise.all(jobs.map((j) => j.done))).toEqual(jobs.map(() => "left"));
    for (const j of jobs) {
      expect(await eventually(() => recordOf(j.id), `ledger record ${j.id}`), j.id).toMatchObject({ outcome: "aborted" });
      if (!j.native) await eventually(() => upstreamOf(j.tag)?.abortedAt, `upstream of ${j.id} aborted`);
    }
    await eventually(() => (s.anthropic.aborted - abortedBefore >= 20 ? true : undefined), "every native upstream stream cut");

    const after = await within(drainChat({ messages: [{ role: "user", content: "Hi [pace:burst]" }], stream_options: { include_usage: true } }, `after-leaving-${randomUUID()}`), ENDS_WITHIN, "stream after the disconnects");
    expect(after.at(-1)?.usage).toBeTruthy();
  });
});
