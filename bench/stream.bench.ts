// The streaming hot path, in process (tinybench), each figure next to a baseline from the same run:
//   1. SSE parse per chunk: core/sse/parse.ts vs eventsource-parser (and one 1 MiB line, which must parse in linear time)
//   2. relay per chunk: relayChatStream vs a bare async pass-through of the same events
//      and usage-metering's per-event output estimate next to the parse
//   3. encode per chunk: encodeSse vs re-serialising each chunk (what the relay avoids)
//   3b. naming the gateway's model id in every chunk (core/served-model.ts): text splice vs leaving the chunk as
//      it came vs parse + set + stringify
//   4. one whole request on loopback: direct to the fake upstream, through a bare proxy, through the gateway
//      (auth + router), streaming and not — client, proxy and upstream share this one process. The gateway runs
//      twice: on a model whose upstream answers with its own id (every chunk renamed to the gateway's id, the usual
//      case) and on one whose upstream id is the gateway id (nothing to rename): their ratio is what naming costs.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { StringDecoder } from "node:string_decoder";
import YAML from "yaml";
import { createParser } from "eventsource-parser";
import { SseParser, parseSse, type SseEvent } from "../core/sse/parse.ts";
import { encodeSse } from "../core/sse/encode.ts";
import { eventOutputTokens } from "../core/metering/output-estimate.ts";
import { relayChatBody, relayChatStream } from "../providers/openai-compatible/stream.ts";
import { StreamModelNamer } from "../core/served-model.ts";
import { startGateway } from "../core/server.ts";
import { createLogger } from "../core/log.ts";
import { render, createFakeUpstream, UPSTREAM_KEY } from "./load/upstream.ts";
import { createBareProxy } from "./load/bare-proxy.ts";
import { benchConfig, BENCH_KEY, BENCH_MODEL } from "./load/config.ts";
import { createPool, fetchText, requestBody, send, type Done, type LoadTarget } from "./load/client.ts";
import { assert, assertEqual, runGroup } from "./lib.ts";

const CHUNKS = 50;
const { frames } = render("gpt-4o-mini", CHUNKS, true);
const enc = new TextEncoder();
/** One read per frame: how a real model's tokens arrive. */
const perFrame = frames.map((f) => enc.encode(f));
/** 512-byte reads that cut frames (and lines) anywhere: a busy connection. */
const whole = enc.encode(frames.join(""));
const cut: Uint8Array[] = [];
for (let i = 0; i < whole.length; i += 512) cut.push(whole.subarray(i, i + 512));
const expected = frames.map((f) => f.slice(6, -2));
const n = frames.length;

// ---- 1. parse -------------------------------------------------------------------------------------------------
function ours(reads: Uint8Array[]): string[] {
  const p = new SseParser();
  const out: string[] = [];
  for (const r of reads) for (const ev of p.push(r)) out.push(ev.data);
  return out;
}
function theirs(reads: Uint8Array[]): string[] {
  const out: string[] = [];
  const decoder = new StringDecoder("utf8"); // the same decoder ours uses: the ratio is about parsing
  const p = createParser({ onEvent: (ev) => out.push(ev.data) });
  for (const r of reads) p.feed(decoder.write(r));
  return out;
}
await runGroup(`SSE parse, ${n} frames per stream, one read per frame`, [
  { name: "eventsource-parser", fn: () => theirs(perFrame), check: () => assertEqual(theirs(perFrame), expected, "eventsource-parser") },
  { name: "core/sse SseParser", fn: () => ours(perFrame), check: () => assertEqual(ours(perFrame), expected, "SseParser") },
], { perItem: { count: n, unit: "frame" } });
await runGroup(`SSE parse, ${n} frames per stream, 512-byte reads`, [
  { name: "eventsource-parser", fn: () => theirs(cut), check: () => assertEqual(theirs(cut), expected, "eventsource-parser") },
  { name: "core/sse SseParser", fn: () => ours(cut), check: () => assertEqual(ours(cut), expected, "SseParser") },
], { perItem: { count: n, unit: "frame" } });
// One long line from an upstream (issue 25): each read must cost its own length, not the line's so far.
const LINE = enc.encode(`data: ${"a".repeat(1024 * 1024)}\n\n`);
const lineReads: Uint8Array[] = [];
for (let i = 0; i < LINE.length; i += 16 * 1024) lineReads.push(LINE.subarray(i, i + 16 * 1024));
const lineLength = (reads: Uint8Array[], parse: (reads: Uint8Array[]) => string[]) => parse(reads)[0]?.length;
await runGroup("SSE parse, one 1 MiB line in 16 KiB reads", [
  { name: "eventsource-parser", fn: () => theirs(lineReads), check: () => assertEqual(lineLength(lineReads, theirs), 1024 * 1024, "eventsource-parser") },
  { name: "core/sse SseParser", fn: () => ours(lineReads), check: () => assertEqual(lineLength(lineReads, ours), 1024 * 1024, "SseParser") },
]);

// ---- 2. relay -------------------------------------------------------------------------------------------------
const events: SseEvent[] = expected.map((data) => ({ data }));
async function* source(): AsyncGenerator<SseEvent> {
  for (const ev of events) yield ev;
}
async function* passThrough(it: AsyncIterable<SseEvent>): AsyncGenerator<SseEvent> {
  for await (const ev of it) yield ev;
}
let usageReports = 0;
const call = { reportUsage: () => { usageReports++; }, reportFirstToken: () => {} };
async function drain(it: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const ev of it) out.push(ev);
  return out;
}
await runGroup(`relay, ${n} events per stream (usage chunk dropped: client did not ask)`, [
  { name: "async pass-through", fn: () => drain(passThrough(source())), check: async () => assertEqual((await drain(passThrough(source()))).length, n, "pass-through") },
  {
    name: "relayChatStream",
    fn: () => drain(relayChatStream(source(), false, call, "bench")),
    check: async () => {
      usageReports = 0;
      const out = await drain(relayChatStream(source(), false, call, "bench"));
      assertEqual(out.map((e) => e.data), expected.filter((d) => !d.includes('"usage":{')), "relay drops the usage-only chunk");
      assert(usageReports === 1, `usage reported once (got ${usageReports})`);
    },
  },
  {
    name: "relayChatBody from reads (hot path: parse+relay fused)",
    fn: () => drain(relayChatBody(readsOf(perFrame), false, call, "bench", new AbortController().signal)),
    check: async () => assertEqual((await drain(relayChatBody(readsOf(perFrame), false, call, "bench", new AbortController().signal))).map((e) => e.data), expected.filter((d) => !d.includes('"usage":{')), "fused relay"),
  },
  {
    name: "parseSse+relay from reads",
    fn: () => drain(relayChatStream(parseSse(readsOf(perFrame)), false, call, "bench")),
    check: async () => assertEqual((await drain(relayChatStream(parseSse(readsOf(perFrame)), false, call, "bench"))).length, n - 1, "parse+relay"),
  },
], { perItem: { count: n, unit: "event" } });
async function* readsOf(reads: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const r of reads) yield r;
}

// usage-metering estimates each relayed event's generated text (in case the upstream never reports usage): its
// cost per event next to parsing the same events.
await runGroup(`usage-metering's output estimate, ${n} events per stream`, [
  { name: "core/sse SseParser (one read per frame)", fn: () => ours(perFrame) },
  { name: "eventOutputTokens (output-estimate.ts)", fn: () => { let t = 0; for (const ev of events) t += eventOutputTokens("chat", ev); return t; }, check: () => assert(events.reduce((t, ev) => t + eventOutputTokens("chat", ev), 0) >= CHUNKS, "a token per content chunk at least") },
], { perItem: { count: n, unit: "event" } });

// ---- 3. encode ------------------------------------------------------------------------------------------------
const encodeAll = () => {
  let s = 0;
  for (const ev of events) s += encodeSse(ev).length;
  return s;
};
const reserialise = () => {
  let s = 0;
  for (const ev of events) s += encodeSse({ data: ev.data === "[DONE]" ? ev.data : JSON.stringify(JSON.parse(ev.data)) }).length;
  return s;
};
await runGroup(`encode, ${n} events per stream`, [
  { name: "parse+stringify each chunk", fn: reserialise, check: () => assertEqual(reserialise(), whole.length, "re-serialised bytes") },
  { name: "encodeSse (relay as-is)", fn: encodeAll, check: () => assertEqual(encodeAll(), whole.length, "encoded bytes") },
], { perItem: { count: n, unit: "event" } });

// ---- 3b. model naming ----------------------------------------------------------------------------------------
const GATEWAY_ID = "openai/gpt-4o-mini";
const asIs = () => {
  let s = 0;
  for (const ev of events) s += ev.data.length;
  return s;
};
const spliced = () => {
  const namer = new StreamModelNamer("chat", GATEWAY_ID);
  let s = 0;
  for (const ev of events) s += namer.rename(ev).data.length;
  return s;
};
const reparsed = () => {
  let s = 0;
  for (const ev of events) {
    if (ev.data === "[DONE]") continue;
    const j = JSON.parse(ev.data);
    j.model = GATEWAY_ID;
    s += JSON.stringify(j).length;
  }
  return s;
};
const grown = (GATEWAY_ID.length - "gpt-4o-mini".length) * (n - 1);
await runGroup(`model naming, ${n} chat chunks per stream (gpt-4o-mini -> ${GATEWAY_ID} in each)`, [
  { name: "as the upstream sent them", fn: asIs },
  {
    name: "StreamModelNamer (text splice)",
    fn: spliced,
    check: () => {
      const namer = new StreamModelNamer("chat", GATEWAY_ID);
      const out = events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(namer.rename(e).data).model);
      assertEqual([...new Set(out)], [GATEWAY_ID], "every chunk names the gateway id");
      assertEqual(spliced(), asIs() + grown, "only the model changed");
    },
  },
  { name: "parse + set model + stringify", fn: reparsed },
], { perItem: { count: n, unit: "event" } });

// ---- 4. whole request on loopback -----------------------------------------------------------------------------
const listen = (s: Server) => new Promise<number>((r) => s.listen(0, "127.0.0.1", () => r((s.address() as AddressInfo).port)));
const upstream = createFakeUpstream({ chunks: CHUNKS });
const upPort = await listen(upstream);
const upOrigin = `http://127.0.0.1:${upPort}`;
const bare = createBareProxy(upOrigin);
const barePort = await listen(bare.server);
const dir = mkdtempSync(join(tmpdir(), "mg-bench-"));
const configFile = join(dir, "gateway.yaml");
const SAME_ID = "bench/same-id";
const config = benchConfig({ upstream: `${upOrigin}/v1` }) as { models: Record<string, any> };
const served = config.models[BENCH_MODEL];
config.models[SAME_ID] = { ...served, endpoints: [{ ...served.endpoints[0], model: SAME_ID }] };
writeFileSync(configFile, YAML.stringify(config));
const gw = await startGateway({ configFile, port: 0, host: "127.0.0.1", watch: false, logger: createLogger("warn") });

const targets: LoadTarget[] = [
  { name: "direct", origin: upOrigin, path: "/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${UPSTREAM_KEY}` } },
  { name: "bare proxy", origin: `http://127.0.0.1:${barePort}`, path: "/api/v1/chat/completions", headers: { "content-type": "application/json" } },
  { name: "gateway (auth+router)", origin: gw.url, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } },
  { name: "gateway, nothing to rename", origin: gw.url, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } },
];
const modelOf = (t: LoadTarget) => (t.name === "gateway, nothing to rename" ? SAME_ID : BENCH_MODEL);
const pools = new Map(targets.map((t) => [t.name, createPool(t.origin, 1)]));
const once = (t: LoadTarget, stream: boolean, body: string) => new Promise<Done>((resolve) => send(pools.get(t.name)!, t, body, stream, resolve));

try {
  for (const stream of [false, true]) {
    const bodies = new Map(targets.map((t) => [t.name, requestBody(modelOf(t), stream)]));
    await runGroup(`one request on loopback, ${stream ? `streaming ${n} frames` : "non-streaming"} (client + servers in this process)`, targets.map((t) => ({
      name: t.name,
      fn: () => once(t, stream, bodies.get(t.name)!),
      check: async () => {
        const d = await once(t, stream, bodies.get(t.name)!);
        assert(d.ok, `${t.name}: HTTP ${d.status}${stream ? " or stream without [DONE]" : ""}`);
        if (t.origin === gw.url) {
          const { text } = await fetchText(pools.get(t.name)!, t, bodies.get(t.name)!);
          assert(text.includes(`"model":"${modelOf(t)}"`) && !text.includes('"model":"fake-model"'), `${t.name}: the answer names the gateway's model id`);
        }
      },
    })), { baseline: "bare proxy" });
  }
} finally {
  for (const p of pools.values()) await p.close();
  await gw.close();
  await bare.close();
  upstream.close();
}
