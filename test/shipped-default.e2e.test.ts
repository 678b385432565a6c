// The gateway as shipped (gateway.yaml: SQLite store, the full default pipeline, the default catalog) with a live
// key under a budget and rate limits, driven by the official clients. Guards the reported hang — every chunk and
// [DONE] arrive and the response never ends, on SQLite with usage-metering, when the upstream writes its last
// frames in one packet — on every route a stream takes: chat passthrough, Messages native and translated both
// ways, tool calls, idempotent replays, include_usage on and off. Every stream must END (the client's loop returns,
// the body completes), within a bound so a hang fails instead of stalling CI.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { periodOf } from "../core/store/periods.ts";
import { defaultPipeline } from "../plugins/index.ts";
import { longText, SHIPPED_KEY, SHIPPED_LIMITS, SHIPPED_PROJECT, startShipped, within, type Shipped } from "./helpers/shipped-config.ts";

const ENDS_WITHIN = 10_000;
const CHAT_MODEL = "openai/gpt-4o-mini";
const CLAUDE_MODEL = "anthropic/claude-sonnet-4.5";

let s: Shipped;
let oai: OpenAI;
let claude: Anthropic;
/** Request ids of the requests answered by a provider: each must have exactly one ledger record. */
const answered: string[] = [];

beforeAll(async () => {
  s = await startShipped();
  oai = new OpenAI({ apiKey: SHIPPED_KEY, baseURL: s.gw.baseURL, maxRetries: 0 });
  claude = new Anthropic({ apiKey: SHIPPED_KEY, baseURL: s.gw.url + "/api", maxRetries: 0 });
});
afterAll(async () => {
  await s?.close();
});

const rid = (tag: string) => {
  const id = `${tag}-${randomUUID()}`;
  answered.push(id);
  return id;
};
const ledgerOf = async (requestId: string) =>
  (await s.gw.gateway.store.ledger({ project: SHIPPED_PROJECT })).filter((e) => e.requestId === requestId);

const weatherTools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];
const claudeTools: Anthropic.Tool[] = [
  { name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
];

/** A chat stream through the openai client, read to its end: chunks, the response headers. */
async function chatStream(body: Partial<OpenAI.ChatCompletionCreateParamsStreaming>, requestId: string) {
  const { data, response } = await oai.chat.completions
    .create({ model: CHAT_MODEL, messages: [{ role: "user", content: "Hi" }], ...body, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming, { headers: { "x-request-id": requestId } })
    .withResponse();
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  await within((async () => { for await (const c of data) chunks.push(c); })(), ENDS_WITHIN, `chat stream ${requestId}`);
  return { chunks, headers: response.headers };
}

const text = (chunks: OpenAI.ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");

describe("boot from the shipped gateway.yaml", () => {
  it("runs the SQLite store in its temp dir, the full default pipeline, the openai and anthropic providers (and no other networked one)", () => {
    const { gateway, dir } = s.gw;
    expect(gateway.store.kind).toBe("sqlite");
    expect((gateway.store.inner as unknown as { path: string }).path.startsWith(dir)).toBe(true);
    expect(gateway.config.pipeline.map((p) => p.name)).toEqual(defaultPipeline());
    expect(defaultPipeline()).toEqual(expect.arrayContaining(["auth", "budget", "rate-limit", "idempotency", "usage-metering"]));
    expect([...gateway.config.providers.keys()].sort()).toEqual(["anthropic", "openai", "sim"]);
    expect(gateway.config.models.get(CHAT_MODEL)?.endpoints[0]?.provider).toBe("openai");
  });
});

describe("chat completions through the openai client (passthrough to the OpenAI-protocol fake)", () => {
  it("JSON: the answer, its usage, the x-ratelimit-* headers of the key's limits, one ledger record", async () => {
    const id = rid("json");
    const { data, response } = await oai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: "user", content: "Hi" }] }, { headers: { "x-request-id": id } }).withResponse();
    expect(data.choices[0]!.message.content).toMatch(/^Hello from the fake upstream/);
    expect(response.headers.get("x-ratelimit-limit-requests")).toBe(String(SHIPPED_LIMITS.rpm));
    expect(response.headers.get("x-ratelimit-limit-tokens")).toBe(String(SHIPPED_LIMITS.tpm));
    expect(Number(response.headers.get("x-ratelimit-remaining-requests"))).toBeLessThan(SHIPPED_LIMITS.rpm);
    const [e, more] = await ledgerOf(id);
    expect(more).toBeUndefined();
    expect(e).toMatchObject({ endpoint: "chat", provider: "openai", outcome: "ok", estimated: false, inputTokens: data.usage!.prompt_tokens, outputTokens: data.usage!.completion_tokens });
  });

  // Burst: the whole upstream stream in one write; tail: the finish chunk, usage chunk and [DONE] in one packet
  // after paced frames; drip: 5–20 ms between frames.
  for (const pace of ["burst", "tail", "5", "20"]) {
    for (const includeUsage of [true, false]) {
      it(`stream ends (pace ${pace}, include_usage ${includeUsage}): the client's loop returns, usage chunk iff asked, billed from the upstream's usage`, async () => {
        const id = rid(`stream-${pace}-${includeUsage}`);
        const { chunks, headers } = await chatStream({
          messages: [{ role: "user", content: `Hi [pace:${pace}]` }],
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
        }, id);
        expect(text(chunks)).toBe("Hello from the fake upstream, streaming word by word to the very end.");
        expect(chunks.some((c) => c.choices[0]?.finish_reason === "stop")).toBe(true);
        const usage = chunks.filter((c) => c.usage).map((c) => c.usage!);
        expect(usage).toHaveLength(includeUsage ? 1 : 0);
        expect(headers.get("x-ratelimit-remaining-tokens")).toMatch(/^\d+$/);
        const [e, more] = await ledgerOf(id);
        expect(more).toBeUndefined();
        expect(e).toMatchObject({ outcome: "ok", estimated: false, status: 200 });
        expect(e!.outputTokens).toBeGreaterThan(0);
        if (includeUsage) expect(e).toMatchObject({ inputTokens: usage[0]!.prompt_tokens, outputTokens: usage[0]!.completion_tokens });
      });
    }
  }

  it("tool calls, JSON and streamed: both calls with their arguments, finish_reason tool_calls, the stream ends", async () => {
    const json = await oai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: "user", content: "Weather?" }], tools: weatherTools }, { headers: { "x-request-id": rid("tools-json") } });
    expect(json.choices[0]!.finish_reason).toBe("tool_calls");
    expect(json.choices[0]!.message.tool_calls!.map((c) => (c as { function: { name: string } }).function.name)).toEqual(["get_weather", "get_time"]);

    for (const pace of ["burst", "5"]) {
      const { chunks } = await chatStream({ messages: [{ role: "user", content: `Weather? [pace:${pace}]` }], tools: weatherTools, stream_options: { include_usage: true } }, rid(`tools-stream-${pace}`));
      const args = new Map<number, string>();
      for (const c of chunks) for (const t of c.choices[0]?.delta?.tool_calls ?? []) args.set(t.index, (args.get(t.index) ?? "") + (t.function?.arguments ?? ""));
      expect([...args.values()].map((a) => JSON.parse(a).city)).toEqual(["Paris", "Tokyo"]);
      expect(chunks.some((c) => c.choices[0]?.finish_reason === "tool_calls")).toBe(true);
    }
  });

  it("raw fetch (curl -N): a burst stream with include_usage — the body reaches its end right after data: [DONE]", async () => {
    const id = rid("raw-fetch");
    const res = await fetch(`${s.gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json", "x-request-id": id },
      body: JSON.stringify({ model: CHAT_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Hi [pace:burst]" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const body = await within(res.text(), ENDS_WITHIN, "raw fetch body");
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(body).toContain('"usage":{');
  });

  it("raw node:http on a keep-alive agent: the response emits 'end' (chunked terminator sent), and the socket serves the next request", async () => {
    const { Agent } = await import("node:http");
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const once = (id: string) => new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${s.gw.baseURL}/chat/completions`, {
        method: "POST", agent,
        headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json", "x-request-id": id },
      }, (res) => {
        sockets.add(res.socket);
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => { text += d; });
        res.on("end", () => resolve(text));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(JSON.stringify({ model: CHAT_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Hi [pace:burst]" }] }));
    });
    try {
      for (let i = 0; i < 3; i++) expect((await within(once(rid(`raw-http-${i}`)), ENDS_WITHIN, `raw http stream ${i}`)).endsWith("data: [DONE]\n\n")).toBe(true);
      expect(sockets.size).toBe(1); // the three streams were answered on one reused connection
    } finally {
      agent.destroy();
    }
  });
});

describe("Messages API through the Anthropic client", () => {
  it("native (Anthropic-backed model): JSON, and burst/tail/drip streams that end with message_stop and are billed", async () => {
    const id = rid("msg-native-json");
    const msg = await claude.messages.create({ model: CLAUDE_MODEL, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }, { headers: { "x-request-id": id } });
    expect(msg.content[0]).toMatchObject({ type: "text", text: "Hello from the fake Anthropic upstream." });
    expect((await ledgerOf(id))[0]).toMatchObject({ endpoint: "messages", provider: "anthropic", outcome: "ok", outputTokens: msg.usage.output_tokens });

    for (const pace of ["burst", "tail", "10"]) {
      const sid = rid(`msg-native-${pace}`);
      const stream = await claude.messages.create({ model: CLAUDE_MODEL, max_tokens: 100, stream: true, messages: [{ role: "user", content: `Hi [pace:${pace}]` }] }, { headers: { "x-request-id": sid } });
      const types: string[] = [];
      await within((async () => { for await (const ev of stream) types.push(ev.type); })(), ENDS_WITHIN, `native messages stream ${pace}`);
      expect(types[0]).toBe("message_start");
      expect(types.at(-1)).toBe("message_stop");
      const [e] = await ledgerOf(sid);
      expect(e).toMatchObject({ outcome: "ok", estimated: false });
      expect(e!.outputTokens).toBeGreaterThan(0);
    }
  });

  it("translated (OpenAI-backed model via /v1/messages): JSON, streams of every pace end, streamed tool use ends", async () => {
    const id = rid("msg-translated-json");
    const msg = await claude.messages.create({ model: CHAT_MODEL, max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }, { headers: { "x-request-id": id } });
    expect(msg.content[0]).toMatchObject({ type: "text" });
    expect((msg.content[0] as Anthropic.TextBlock).text).toMatch(/^Hello from the fake upstream/);
    expect((await ledgerOf(id))[0]).toMatchObject({ endpoint: "messages", provider: "openai", outcome: "ok" });

    for (const pace of ["burst", "tail", "10"]) {
      const sid = rid(`msg-translated-${pace}`);
      const final = await within(
        claude.messages.stream({ model: CHAT_MODEL, max_tokens: 100, messages: [{ role: "user", content: `Hi [pace:${pace}]` }] }, { headers: { "x-request-id": sid } }).finalMessage(),
        ENDS_WITHIN, `translated messages stream ${pace}`);
      expect((final.content[0] as Anthropic.TextBlock).text).toBe("Hello from the fake upstream, streaming word by word to the very end.");
      expect(final.stop_reason).toBe("end_turn");
      const [e] = await ledgerOf(sid);
      expect(e).toMatchObject({ endpoint: "messages", outcome: "ok", estimated: false, outputTokens: final.usage.output_tokens });
    }

    const tools = await within(
      claude.messages.stream({ model: CHAT_MODEL, max_tokens: 100, tools: claudeTools, messages: [{ role: "user", content: "Weather? [pace:burst]" }] }, { headers: { "x-request-id": rid("msg-translated-tools") } }).finalMessage(),
      ENDS_WITHIN, "translated tool-use stream");
    expect(tools.stop_reason).toBe("tool_use");
    expect(tools.content.find((b) => b.type === "tool_use")).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
  });

  it("chat completions on an Anthropic-backed model (translated the other way): JSON, streams with and without usage, tool calls streamed", async () => {
    const json = await oai.chat.completions.create({ model: CLAUDE_MODEL, messages: [{ role: "user", content: "Hi" }] }, { headers: { "x-request-id": rid("chat-claude-json") } });
    expect(json.choices[0]!.message.content).toBe("Hello from the fake Anthropic upstream.");

    for (const [pace, includeUsage] of [["burst", true], ["tail", false], ["10", true]] as const) {
      const { chunks } = await chatStream({ model: CLAUDE_MODEL, messages: [{ role: "user", content: `Hi [pace:${pace}]` }], ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }, rid(`chat-claude-${pace}`));
      expect(text(chunks)).toBe("Hello from the fake Anthropic upstream.");
      expect(chunks.filter((c) => c.usage)).toHaveLength(includeUsage ? 1 : 0);
    }

    const { chunks } = await chatStream({ model: CLAUDE_MODEL, messages: [{ role: "user", content: "Weather? [pace:burst]" }], tools: weatherTools.slice(0, 1) }, rid("chat-claude-tools"));
    const args = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((t) => t.function?.arguments ?? "").join("");
    expect(JSON.parse(args)).toMatchObject({ city: "Paris" });
    expect(chunks.some((c) => c.choices[0]?.finish_reason === "tool_calls")).toBe(true);
  });
});

// The reported hang itself: a fast upstream's burst bigger than the client socket's 16 KiB high-water mark makes the
// gateway's write return false; the socket drains at once, while the stream waits for the SQLite group commit of
// its terminal event (or for the next upstream read) — a relay that then waited for that 'drain' waited forever.
describe("long answers written in one burst (more than a socket's high-water mark at once)", () => {
  for (const n of [60, 400, 3000]) {
    it(`chat stream of ${n} words, include_usage: every word, the usage chunk, and the end of the body`, async () => {
      const id = rid(`long-chat-${n}`);
      const { chunks } = await chatStream({ messages: [{ role: "user", content: `Hi [pace:burst] [words:${n}]` }], stream_options: { include_usage: true } }, id);
      expect(text(chunks)).toBe(longText(n));
      expect(chunks.at(-1)?.usage?.completion_tokens).toBe(n);
      expect((await ledgerOf(id))[0]).toMatchObject({ outcome: "ok", outputTokens: n });
    });
  }

  it("raw fetch of a 400-word burst: the body ends right after data: [DONE]", async () => {
    const res = await fetch(`${s.gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json", "x-request-id": rid("long-raw") },
      body: JSON.stringify({ model: CHAT_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Hi [pace:burst] [words:400]" }] }),
    });
    const body = await within(res.text(), ENDS_WITHIN, "raw fetch of a long burst");
    expect(body.length).toBeGreaterThan(64 * 1024);
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("Messages, native and translated, and chat on an Anthropic model: 400-word bursts all end", async () => {
    const native = await claude.messages.create({ model: CLAUDE_MODEL, max_tokens: 5000, stream: true, messages: [{ role: "user", content: "Hi [pace:burst] [words:400]" }] }, { headers: { "x-request-id": rid("long-native") } });
    const types: string[] = [];
    await within((async () => { for await (const ev of native) types.push(ev.type); })(), ENDS_WITHIN, "long native messages stream");
    expect(types.at(-1)).toBe("message_stop");

    const translated = await within(claude.messages.stream({ model: CHAT_MODEL, max_tokens: 5000, messages: [{ role: "user", content: "Hi [pace:burst] [words:400]" }] }, { headers: { "x-request-id": rid("long-translated") } }).finalMessage(), ENDS_WITHIN, "long translated messages stream");
    expect((translated.content[0] as Anthropic.TextBlock).text).toBe(longText(400));

    const { chunks } = await chatStream({ model: CLAUDE_MODEL, messages: [{ role: "user", content: "Hi [pace:burst] [words:400]" }], stream_options: { include_usage: true } }, rid("long-chat-claude"));
    expect(text(chunks)).toBe(longText(400));
  });
});

describe("idempotency keys on streams", () => {
  it("the first stream, a duplicate sent while it runs, and a later replay all end; replays repeat the events, are marked, and are not billed", async () => {
    const key = randomUUID();
    const body = { model: CHAT_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Hi [pace:burst]" }] };
    const open = (id: string) => fetch(`${s.gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${SHIPPED_KEY}`, "content-type": "application/json", "idempotency-key": key, "x-request-id": id },
      body: JSON.stringify(body),
    });
    const ended = (opened: Promise<Response>) =>
      within(opened.then(async (r) => ({ status: r.status, replayed: r.headers.get("idempotent-replayed"), text: await r.text() })), ENDS_WITHIN, "idempotent stream");
    const send = (id: string) => ended(open(id));
    body.messages[0]!.content = "Hi [pace:10]"; // slow enough that the duplicate arrives while it runs
    const waitingId = `idem-waiting-${randomUUID()}`;
    // The duplicate goes once the first's answer has begun, so the first holds the key's claim (taken before the
    // call): sent a fixed 20 ms after it, a loaded machine could get the duplicate there first.
    const opened = open(rid("idem-first"));
    const [first, waiting] = await Promise.all([ended(opened), opened.then(() => send(waitingId))]);
    const replayId = `idem-replay-${randomUUID()}`;
    const replay = await send(replayId);
    expect(first.status).toBe(200);
    expect(first.replayed).toBeNull();
    expect(first.text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(waiting).toMatchObject({ status: 200, replayed: "true", text: first.text });
    expect(replay).toMatchObject({ status: 200, replayed: "true", text: first.text });
    expect(await ledgerOf(waitingId)).toEqual([]);
    expect(await ledgerOf(replayId)).toEqual([]);
  });
});

describe("after the traffic", () => {
  it("the ledger holds exactly one record with usage per answered request, and the budget's spend is their cost", async () => {
    const ledger = await s.gw.gateway.store.ledger({ project: SHIPPED_PROJECT });
    for (const id of answered) {
      const mine = ledger.filter((e) => e.requestId === id);
      expect(mine, id).toHaveLength(1);
      expect(mine[0]!.outcome, id).toBe("ok");
      expect(mine[0]!.inputTokens, id).toBeGreaterThan(0);
      expect(mine[0]!.outputTokens, id).toBeGreaterThan(0);
      expect(mine[0]!.costPico, id).toBeGreaterThan(0n);
    }
    expect(ledger).toHaveLength(answered.length);
    // Month by month, as each record is charged (a run across a month's end has spend in both).
    const months = new Map<string, { start: number; cost: bigint }>();
    for (const e of ledger) {
      const m = periodOf("month", e.chargedAt ?? e.ts);
      months.set(m.key, { start: m.start, cost: (months.get(m.key)?.cost ?? 0n) + e.costPico });
    }
    expect(months.size).toBeGreaterThan(0);
    for (const [key, { start, cost }] of months) expect(await s.gw.gateway.store.spent(SHIPPED_PROJECT, key, start), key).toBe(cost);
  });
});
