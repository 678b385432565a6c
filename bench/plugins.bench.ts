// Per-plugin cost (issue 11): one request through the full default pipeline (every built-in plugin, SQLite store,
// a key with an allowlist, a budget and rate limits that never trip — the shipped shape) against the same pipeline
// minus one plugin, for each plugin by name. full − without(X) is what X adds to a request, so a regression in one
// plugin shows under its name. Gateways run in this process (startGateway, each on its own port and SQLite file)
// in front of the lean fake upstream, one request at a time, non-streaming and streaming.
// A plugin the pipeline cannot do without (others depend on it, or nothing answers without it) is reported as such.
// Guardrails (issue 30) cost nothing for a project without them (the "without guardrails" row); each guardrail a
// project can turn on is a variant of its own, the full pipeline with the bench project guarded by it, reported as
// p50(with it) − p50(full). The request carries an e-mail address, so the PII rule has something to redact (and
// the answer goes through placeholder restoration).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import YAML from "yaml";
import { startGateway, type RunningGateway } from "../core/server.ts";
import { createLogger } from "../core/log.ts";
import { builtinPlugins, defaultPipeline } from "../plugins/index.ts";
import { createFakeUpstream } from "./load/upstream.ts";
import { BENCH_KEY, BENCH_MODEL } from "./load/config.ts";
import { slowStreamsConfig } from "./load/slow-streams.ts";
import { createPool, requestBody, send, type Done, type LoadTarget } from "./load/client.ts";
import { performance } from "node:perf_hooks";
import { assert, selected, shuffled } from "./lib.ts";

const CHUNKS = 20;
const upstream = createFakeUpstream({ chunks: CHUNKS });
const upPort = await new Promise<number>((r) => upstream.listen(0, "127.0.0.1", () => r((upstream.address() as AddressInfo).port)));
const dir = mkdtempSync(join(tmpdir(), "mg-bench-plugins-"));
const all = defaultPipeline();

// Self time of each plugin's handle() in the full pipeline: the time from entering handle() to its return, minus the
// time spent inside next() (everything downstream). Precise and by name, but it misses work a plugin leaves for
// later (wrapping a response stream, work after the response is sent) — the without-one deltas above catch that.
// The wrapper is on the definition object every gateway in this process resolves its pipeline from.
let recording: Map<string, number> | undefined;
for (const name of all) {
  const def = builtinPlugins[name]!;
  const handle = def.handle;
  def.handle = async (ctx, next, instance) => {
    const rec = recording;
    const t0 = performance.now();
    let inner = 0;
    try {
      await handle.call(def, ctx, async () => {
        const a = performance.now();
        try {
          await next();
        } finally {
          inner += performance.now() - a;
        }
      }, instance);
    } finally {
      if (rec) rec.set(name, (rec.get(name) ?? 0) + performance.now() - t0 - inner);
    }
  };
}

interface Variant { name: string; without?: string; pipeline?: string[]; guardrails?: Record<string, unknown>; gw?: RunningGateway; target?: LoadTarget; skipped?: string }

/** Each guardrail as a project turns it on (docs/guardrails.md), and all of them together. */
const PII = { name: "pii", detect: ["email", "phone", "card", "iban", "national_id"], action: "redact" };
const SECRETS = { name: "no-secrets", detect: ["secret"], on: ["input", "output"], action: "block" };
const TOPIC = { name: "competitors", keywords: ["Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark Industries", "Wayne Enterprises", "Cyberdyne"], action: "flag" };
const MODERATION = { provider: "fake", timeout_ms: 2000 };
const GUARDRAILS: Array<[string, Record<string, unknown>]> = [
  ["pii redaction (placeholders, restored in the answer)", { rules: [PII] }],
  ["secrets, input and output (block)", { rules: [SECRETS] }],
  ["keyword topic (flag)", { rules: [TOPIC] }],
  ["moderation (/moderations, input)", { moderation: MODERATION }],
  ["all four", { rules: [PII, SECRETS, TOPIC], moderation: MODERATION }],
];

// "auth + router only" is the reference for everything else together (auth and router cannot be left out alone).
const variants: Variant[] = [
  { name: "full pipeline" },
  ...all.map((p) => ({ name: `without ${p}`, without: p })),
  { name: "auth + router only", pipeline: ["auth", "router"] },
  ...GUARDRAILS.map(([name, guardrails]) => ({ name: `guardrail: ${name}`, guardrails })),
];
const log = createLogger("silent" as never);

for (const v of variants) {
  const config = slowStreamsConfig(`http://127.0.0.1:${upPort}/v1`, join(dir, `${v.without ?? v.pipeline?.join("-") ?? "full"}.db`), 16) as Record<string, any>;
  config.pipeline = v.pipeline ?? all.filter((p) => p !== v.without);
  if (v.guardrails) config.projects.bench.guardrails = v.guardrails;
  const configFile = join(dir, `${v.without ?? v.pipeline?.join("-") ?? (v.guardrails ? `guard-${variants.indexOf(v)}` : "full")}.yaml`);
  writeFileSync(configFile, YAML.stringify(config));
  try {
    v.gw = await startGateway({ configFile, port: 0, host: "127.0.0.1", watch: false, logger: log });
    v.target = { name: v.name, origin: v.gw.url, path: "/api/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` } };
  } catch (err) {
    v.skipped = `required (${(err as Error).message.split("\n")[0]!.split(": ").at(-1)!.split(",")[0]!.slice(0, 80)})`;
  }
}

const pools = new Map(variants.filter((v) => v.target).map((v) => [v.name, createPool(v.target!.origin, 1)]));
const once = (v: Variant, stream: boolean, body: string) => new Promise<Done>((resolve) => send(pools.get(v.name)!, v.target!, body, stream, resolve));

// Interleaved rounds, not one variant after another: the process keeps getting faster for a while (JIT, SQLite
// page cache), and timing the variants in sequence showed that drift as a cost growing with each plugin's position.
// Each round times one request per variant in a fresh random order; the figure is each variant's median.
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 400;
const WARMUP_ROUNDS = Math.max(50, ROUNDS >> 2);

try {
  for (const stream of [false, true]) {
    const title = `one request, full default pipeline vs without one plugin, ${stream ? `streaming ${CHUNKS} chunks` : "non-streaming"}`;
    if (!selected(title)) continue;
    // The bench prompt plus an address for the PII rule to redact (every variant sends the same body).
    const body = requestBody(BENCH_MODEL, stream).replace("Say hello in fifty tokens.", "Say hello in fifty tokens to alice@example.com.");
    // Asserted once before timing; a variant that cannot answer without the plugin is not timed.
    for (const v of variants) {
      if (!v.target || v.skipped) continue;
      const d = await once(v, stream, body);
      if (!d.ok) {
        if (!v.without) throw new Error(`bench check failed: full pipeline: HTTP ${d.status}${stream ? " or stream without [DONE]" : ""}`);
        v.skipped = `cannot answer without it (HTTP ${d.status})`;
      }
      if (v.guardrails) await checkGuarded(v);
    }
    const timed = variants.filter((v) => v.target && !v.skipped);
    const samples = new Map(timed.map((v) => [v.name, [] as number[]]));
    const selfTimes = new Map(all.map((p) => [p, [] as number[]]));
    const guardSelf = new Map(timed.filter((v) => v.guardrails).map((v) => [v.name, [] as number[]]));
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      for (const v of shuffled(timed)) {
        const rec = (recording = v === variants[0] || v.guardrails ? new Map() : undefined);
        const t0 = performance.now();
        const d = await once(v, stream, body);
        const ms = performance.now() - t0;
        recording = undefined;
        assert(d.ok, `${v.name}: HTTP ${d.status} during timing`);
        if (r < WARMUP_ROUNDS) continue;
        samples.get(v.name)!.push(ms);
        if (rec && v.guardrails) guardSelf.get(v.name)!.push(rec.get("guardrails") ?? NaN);
        else if (rec) for (const p of all) selfTimes.get(p)!.push(rec.get(p) ?? NaN);
      }
    }
    assert(all.every((p) => selfTimes.get(p)!.every(Number.isFinite)), "every plugin's handle ran on every full-pipeline request");
    printPerPlugin(title, samples, selfTimes);
    printGuardrails(title, samples, guardSelf);
  }
} finally {
  for (const p of pools.values()) await p.close();
  for (const v of variants) await v.gw?.close();
  upstream.close();
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** plugin, µs per request = p50(full) − p50(full without it); ± is half the spread of that difference over 4 quarters of the rounds. */
function printPerPlugin(title: string, samples: Map<string, number[]>, selfTimes: Map<string, number[]>): void {
  const full = samples.get("full pipeline")!;
  const fullP50 = quantile(full, 0.5);
  const quarter = (xs: number[], k: number) => xs.slice((k * xs.length) >> 2, ((k + 1) * xs.length) >> 2);
  const lines = [["plugin", "handle µs p50", "p99", "full − without µs", "± (quarters)", "p50 without", "note"]];
  for (const v of variants) {
    if (v === variants[0] || v.guardrails) continue;
    const own = v.without ? selfTimes.get(v.without) : undefined;
    const selfCols = own ? [(quantile(own, 0.5) * 1000).toFixed(1), (quantile(own, 0.99) * 1000).toFixed(1)] : ["", ""];
    const xs = samples.get(v.name);
    if (!xs) {
      lines.push([v.without ?? v.name, ...selfCols, "-", "", "", v.skipped ?? "not timed"]);
      continue;
    }
    const us = (fullP50 - quantile(xs, 0.5)) * 1000;
    const byQuarter = [0, 1, 2, 3].map((k) => (quantile(quarter(full, k), 0.5) - quantile(quarter(xs, k), 0.5)) * 1000);
    const spread = (Math.max(...byQuarter) - Math.min(...byQuarter)) / 2;
    lines.push([v.without ?? `(${v.name}: the rest together)`, ...selfCols, us.toFixed(1), spread.toFixed(1), `${(quantile(xs, 0.5) * 1000).toFixed(0)}`, ""]);
  }
  const w = lines[0]!.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  process.stdout.write(`== ${title}\nfull pipeline p50 ${(fullP50 * 1000).toFixed(0)} µs, p99 ${(quantile(full, 0.99) * 1000).toFixed(0)} µs; ${ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} unmeasured; handle µs = self time of its handle() in the full pipeline (excl. next()); full − without = p50(full) − p50(full without it), ± = half the spread over quarters of the rounds\n`);
  process.stdout.write(`${lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join("  ")).join("\n")}\n\n`);
}

/** A guardrail variant did its work on the checked request: the redaction is in its ledger record, the moderation has one. */
async function checkGuarded(v: Variant): Promise<void> {
  const entries = await v.gw!.gateway.store.ledger({ project: "bench" });
  const rules = (v.guardrails!.rules as Array<{ name: string }> | undefined) ?? [];
  const request = entries.filter((e) => e.endpoint !== "moderation").at(-1);
  if (rules.some((r) => r.name === "pii")) assert(request?.guardrail?.includes("redact:pii"), `${v.name}: the e-mail address was not redacted`);
  if (v.guardrails!.moderation) assert(entries.some((e) => e.endpoint === "moderation" && e.outcome === "ok"), `${v.name}: no moderation call in the ledger`);
}

/** guardrail, µs per request = p50(full pipeline with the bench project guarded by it) − p50(full pipeline). */
function printGuardrails(title: string, samples: Map<string, number[]>, self: Map<string, number[]>): void {
  const full = samples.get("full pipeline")!;
  const fullP50 = quantile(full, 0.5);
  const quarter = (xs: number[], k: number) => xs.slice((k * xs.length) >> 2, ((k + 1) * xs.length) >> 2);
  const lines = [["guardrail", "handle µs p50", "p99", "with − full µs", "± (quarters)", "p50 with"]];
  for (const v of variants) {
    if (!v.guardrails) continue;
    const xs = samples.get(v.name);
    const own = self.get(v.name);
    if (!xs || !own) {
      lines.push([v.name, "", "", "-", "", v.skipped ?? "not timed"]);
      continue;
    }
    const byQuarter = [0, 1, 2, 3].map((k) => (quantile(quarter(xs, k), 0.5) - quantile(quarter(full, k), 0.5)) * 1000);
    lines.push([
      v.name, (quantile(own, 0.5) * 1000).toFixed(1), (quantile(own, 0.99) * 1000).toFixed(1),
      ((quantile(xs, 0.5) - fullP50) * 1000).toFixed(1), ((Math.max(...byQuarter) - Math.min(...byQuarter)) / 2).toFixed(1), (quantile(xs, 0.5) * 1000).toFixed(0),
    ]);
  }
  const w = lines[0]!.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  process.stdout.write(`== ${title}: each guardrail turned on for the project (handle µs = the guardrails plugin's self time; it excludes the wrapped stream)\n`);
  process.stdout.write(`${lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join("  ")).join("\n")}\n\n`);
}
