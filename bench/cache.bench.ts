// The response cache's hit path against the upstream path (issue 30): one request at a time through the full default
// pipeline on SQLite (allowlist, budget, rate limits that never trip — the shipped shape), in front of the lean fake
// upstream on loopback in this process. Tasks, in interleaved rounds (each round one request per task, in a random
// order; medians after unmeasured warm-up rounds, as in plugins.bench.ts):
//   upstream          — the request does not ask for the cache: the plugin steps aside, the provider answers
//   hit (front)       — answered from the in-process front (parsed, no store call)
//   hit (SQLite)      — a gateway with cache.memory_bytes: 0: every hit reads and parses the SQLite row
//   miss, kept        — refresh: true: the provider answers and the answer is kept (front + SQLite write)
// and the first two again on a gateway with store.fsync: false: every answer (a hit too) waits for its durable ledger
// record, whose fdatasync is much of a hit's time on this disk. Non-streaming and streaming (20 chunks). The loopback upstream answers in well under a millisecond, so the
// ratios are the gateway's own work; a real provider's hundreds of milliseconds would make a hit's share far smaller.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import YAML from "yaml";
import { startGateway, type RunningGateway } from "../core/server.ts";
import { createLogger } from "../core/log.ts";
import { createFakeUpstream } from "./load/upstream.ts";
import { BENCH_KEY, BENCH_MODEL } from "./load/config.ts";
import { slowStreamsConfig } from "./load/slow-streams.ts";
import { createPool, fetchText, send, type Done, type LoadTarget } from "./load/client.ts";
import { assert, selected, shuffled } from "./lib.ts";

const CHUNKS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 400;
const WARMUP_ROUNDS = Math.max(50, ROUNDS >> 2);

const upstream = createFakeUpstream({ chunks: CHUNKS });
const upPort = await new Promise<number>((r) => upstream.listen(0, "127.0.0.1", () => r((upstream.address() as AddressInfo).port)));
const dir = mkdtempSync(join(tmpdir(), "mg-bench-cache-"));
const log = createLogger("silent" as never);

async function gateway(name: string, o: { memoryBytes?: number; fsync?: boolean } = {}): Promise<{ gw: RunningGateway; target: LoadTarget }> {
  const config = slowStreamsConfig(`http://127.0.0.1:${upPort}/v1`, join(dir, `${name}.db`), 16) as Record<string, any>;
  config.projects.bench.cache = { ttl_seconds: 3600 };
  if (o.memoryBytes !== undefined) config.cache = { memory_bytes: o.memoryBytes };
  if (o.fsync === false) config.store.fsync = false;
  const configFile = join(dir, `${name}.yaml`);
  writeFileSync(configFile, YAML.stringify(config));
  const gw = await startGateway({ configFile, port: 0, host: "127.0.0.1", watch: false, logger: log });
  return { gw, target: { name, origin: gw.url, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } } };
}

const withFront = await gateway("front");
const noFront = await gateway("sqlite", { memoryBytes: 0 });
const noFsync = await gateway("nofsync", { fsync: false });
const gateways = [withFront, noFront, noFsync];
const pools = new Map(gateways.map((g) => [g.target.origin, createPool(g.target.origin, 1)]));

const body = (stream: boolean, cache?: unknown) => JSON.stringify({
  model: BENCH_MODEL, messages: [{ role: "user", content: "Say hello in twenty tokens." }], ...(stream ? { stream: true } : {}),
  ...(cache === undefined ? {} : { providerOptions: { gateway: { cache } } }),
});

interface Task { name: string; target: LoadTarget; body: string; expect: string | null }
const once = (t: Task, stream: boolean) => new Promise<Done>((resolve) => send(pools.get(t.target.origin)!, t.target, t.body, stream, resolve));

try {
  for (const stream of [false, true]) {
    const title = `hit path vs upstream path, one request, full default pipeline on SQLite, ${stream ? `streaming ${CHUNKS} chunks` : "non-streaming"}`;
    if (!selected(title)) continue;
    const tasks: Task[] = [
      { name: "upstream (cache not asked)", target: withFront.target, body: body(stream), expect: null },
      { name: "hit (front)", target: withFront.target, body: body(stream, true), expect: "hit" },
      { name: "hit (SQLite, no front)", target: noFront.target, body: body(stream, true), expect: "hit" },
      { name: "miss, kept (refresh)", target: withFront.target, body: body(stream, { refresh: true }), expect: "miss" },
      { name: "upstream, fsync off", target: noFsync.target, body: body(stream), expect: null },
      { name: "hit (front), fsync off", target: noFsync.target, body: body(stream, true), expect: "hit" },
    ];
    // Warm the cache, then check each task answers as it should (a bench never times broken code).
    for (const t of tasks) if (t.expect === "hit") await fetchText(pools.get(t.target.origin)!, t.target, t.body);
    await new Promise((r) => setTimeout(r, 50)); // the SQLite write of the warm-up answers is in the background
    let reference: string | undefined;
    for (const t of tasks) {
      const r = await fetchText(pools.get(t.target.origin)!, t.target, t.body);
      assert(r.status === 200, `${t.name}: HTTP ${r.status}`);
      assert((r.headers["x-mg-cache"] ?? null) === t.expect, `${t.name}: x-mg-cache ${String(r.headers["x-mg-cache"])}, expected ${t.expect}`);
      assert(!stream || r.text.endsWith("data: [DONE]\n\n"), `${t.name}: stream without [DONE]`);
      const content = stream ? r.text.replace(/"(id|created)":[^,]*,/g, "").split("\n").filter((l) => l.includes('"content"')).length : JSON.parse(r.text).choices[0].message.content;
      reference ??= String(content);
      assert(String(content) === reference, `${t.name}: a different answer`);
    }
    const samples = new Map(tasks.map((t) => [t.name, [] as number[]]));
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      for (const t of shuffled(tasks)) {
        const t0 = performance.now();
        const d = await once(t, stream);
        const ms = performance.now() - t0;
        assert(d.ok, `${t.name}: HTTP ${d.status} during timing`);
        if (round >= WARMUP_ROUNDS) samples.get(t.name)!.push(ms);
      }
    }
    print(title, tasks, samples);
  }
} finally {
  for (const p of pools.values()) await p.close();
  for (const g of gateways) await g.gw.close();
  upstream.close();
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

function print(title: string, tasks: Task[], samples: Map<string, number[]>): void {
  const base = quantile(samples.get(tasks[0]!.name)!, 0.5);
  const unsynced = quantile(samples.get("upstream, fsync off")!, 0.5);
  const lines = [["task", "p50 µs", "p99 µs", "p50 vs upstream", "vs upstream, fsync off"]];
  for (const t of tasks) {
    const xs = samples.get(t.name)!;
    const p50 = quantile(xs, 0.5);
    const off = t.name.endsWith("fsync off");
    lines.push([t.name, (p50 * 1000).toFixed(0), (quantile(xs, 0.99) * 1000).toFixed(0),
      t === tasks[0] ? "1.00 (baseline)" : off ? "" : `${(p50 / base).toFixed(2)}x`, off ? `${(p50 / unsynced).toFixed(2)}x` : ""]);
  }
  const w = lines[0]!.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  process.stdout.write(`== ${title}\n${ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} unmeasured, one request at a time on loopback\n`);
  process.stdout.write(`${lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join("  ")).join("\n")}\n\n`);
}
