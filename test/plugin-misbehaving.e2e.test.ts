// A third-party plugin's mistakes fail its own request, never the gateway (docs/plugins.md "Failures"): one that
// does not await next() gets its request a 500 with the rest of the pipeline cancelled (the upstream call too, so
// nothing is billed), one that never returns is let go once its client has left, a stray rejection is logged, and a
// setup that fails on reload releases what the earlier plugins set up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import type { ServerResponse } from "node:http";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startChildGateway } from "./helpers/child-gateway.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";
import type { RunningGateway } from "../core/server.ts";
import { ABANDON_AFTER_MS } from "../core/pipeline/abandon.ts";
import { builtins } from "../core/builtins.ts";

const KEY = testKey("misbehave"); // a live key: its requests are billed
const PRICING = { input: "0.01", output: "0.01" };
const dir = mkdtempSync(join(tmpdir(), "mg-misbehave-"));
const counts = join(dir, "counts.log");

// Misbehaves as the request's x-misbehave header says.
writeFileSync(join(dir, "misbehaving.mjs"), `export default { name: "misbehaving", async handle(ctx, next) {
  const how = ctx.headers["x-misbehave"];
  if (how === "forget") { next(); return; }
  if (how === "forget-late") { const out = globalThis.__mgUpstreamCallOut?.(); next(); await out; return; }
  if (how === "twice") { next(); return next(); }
  if (how === "hang") return new Promise(() => {});
  if (how === "stray") Promise.reject(new Error("stray rejection from a plugin"));
  await next();
} };
`);
// Writes each setup and teardown down; the flaky one's setup throws while the file "fail" exists.
writeFileSync(join(dir, "counted.mjs"), `import { appendFileSync } from "node:fs";
export default { name: "counted", setup() { appendFileSync(${JSON.stringify(counts)}, "setup\\n"); return {}; },
  teardown() { appendFileSync(${JSON.stringify(counts)}, "teardown\\n"); }, handle: (ctx, next) => next() };
`);
writeFileSync(join(dir, "flaky.mjs"), `import { existsSync } from "node:fs";
export default { name: "flaky", setup() { if (existsSync(${JSON.stringify(join(dir, "fail"))})) throw new Error("cannot reach the license server"); }, handle: (ctx, next) => next() };
`);

const config = () => ({
  store: { kind: "memory" },
  providers: { up: { protocol: "openai", base_url: upstream.origin + "/v1", api_key: "sk-up" } },
  models: { "test/slow": { endpoints: [{ provider: "up", model: "m", pricing: PRICING }] } },
  projects: { p: { keys: [keyEntry("k", KEY)] } },
  plugins: {
    misbehaving: { module: join(dir, "misbehaving.mjs") },
    counted: { module: join(dir, "counted.mjs") },
    flaky: { module: join(dir, "flaky.mjs") },
  },
  pipeline: ["auth", "counted", "flaky", "misbehaving", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
});

/** Every call the upstream received, and whether the gateway hung up on it before the answer. */
const calls: Array<{ cancelled: boolean }> = [];
/** The "forget-late" plugin returns once its upstream call is out (a fixed 100 ms let a loaded machine return before
 * the call reached the upstream): the next call the upstream receives, or 10 s, after which the test's check fails. */
let callArrived = () => {};
(globalThis as { __mgUpstreamCallOut?: () => Promise<void> }).__mgUpstreamCallOut = () =>
  new Promise<void>((r) => {
    const bound = setTimeout(r, 10_000);
    callArrived = () => { clearTimeout(bound); r(); };
  });
let upstream: Loopback;
let gw: RunningGateway, log: CapturedLog, baseURL: string;

const chat = (model: string, how?: string, signal?: AbortSignal) =>
  fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, ...(how ? { "x-misbehave": how } : {}) },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    signal,
  });

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

async function usage() {
  const rows = await gw.gateway.ledgerReader.usage({ since: 0, until: Date.now() + 3_600_000, groupBy: [], bucket: "none" });
  return rows[0] ?? { requests: 0, errors: 0, costPico: 0n };
}

beforeAll(async () => {
  // Answers after 300 ms, with usage: a call left to finish is billed.
  upstream = await listenLoopback(async (req, res: ServerResponse) => {
    await readRequest(req);
    const call = { cancelled: false };
    calls.push(call);
    res.once("close", () => {
      if (!res.writableFinished) call.cancelled = true;
    });
    callArrived();
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "chatcmpl-1", object: "chat.completion", created: 1, model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 },
      }));
    }, 300);
  });
  ({ gw, log, baseURL } = await startLoggedGateway(config(), {}, "info"));
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a plugin that does not await next()", () => {
  it("fails its request with a 500 naming the plugin in the log, cancels the upstream call, bills nothing, and the gateway serves on", async () => {
    // Before: the 404 below, rejected with nobody listening, ended the process (vitest reports the unhandled rejection).
    const unknown = await chat("nope/nope", "forget");
    expect(unknown.status).toBe(500);
    const twice = await chat("nope/nope", "twice");
    expect(twice.status).toBe(500);

    // Returning at once cancels the call before it goes out; returning while it is out hangs up on the upstream.
    for (const how of ["forget", "forget-late"]) {
      const r = await chat("test/slow", how);
      expect(r.status).toBe(500);
      expect((await r.json()).error.code).toBe("INTERNAL");
    }
    await until("the upstream call to end", () => calls.length === 1 && calls[0]!.cancelled, 2000);
    await until("both ledger records", async () => (await usage()).requests === 2);
    // Before: 2 requests, 0 errors, both billed in full for answers the client never got.
    expect(await usage()).toMatchObject({ requests: 2, errors: 2, costPico: 0n });
    const records = (await gw.gateway.ledgerReader.search({ limit: 10 })).records;
    expect(records.map((r) => [r.status, r.outcome])).toEqual([[500, "error"], [500, "error"]]); // the gateway's failure, not a client that left
    const named = log.records().filter((l) => l.level >= 50 && JSON.stringify(l).includes(`plugin \\"misbehaving\\" returned without awaiting next()`));
    expect(named.length).toBeGreaterThanOrEqual(2);

    const ok = await chat("test/slow");
    expect(ok.status).toBe(200);
    await until("the answered request's record", async () => (await usage()).requests === 3);
    expect((await usage()).costPico).toBeGreaterThan(0n); // an answered call is billed: the ledger does see money
  });
});

describe("a plugin that never returns", () => {
  it("is let go once the client has left: in-flight back to 0, the log names the plugin", async () => {
    const inFlight = async () => {
      const text = await (await fetch(gw.metricsUrl!)).text();
      return Number(/^gateway_requests_in_flight\{endpoint="chat"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const client = new AbortController();
    const pending = chat("test/slow", "hang", client.signal).catch((e) => e);
    await until("the request to arrive", async () => (await inFlight()) === 1);
    client.abort();
    expect(await pending).toBeInstanceOf(Error);
    // Before: held forever (in-flight stayed 1, a SIGTERM waited the whole grace period).
    await until("the request to be let go", async () => gw.gateway.inflight.size === 0 && (await inFlight()) === 0, ABANDON_AFTER_MS + 3000);
    expect(log.records().some((l) => l.level >= 50 && l.plugin === "misbehaving" && /had not returned after the request was aborted/.test(l.msg))).toBe(true);
    expect((await chat("test/slow")).status).toBe(200);
  }, 15_000);
});

describe("a plugin setup that fails on reload", () => {
  it("tears down the plugins set up before it, and the refusal names the plugin", async () => {
    const lines = () => (existsSync(counts) ? readFileSync(counts, "utf8").trim().split("\n") : []);
    const before = lines();
    writeFileSync(join(dir, "fail"), "");
    try {
      for (let i = 0; i < 4; i++) {
        const r = await gw.gateway.reload(gw.gateway.config.file);
        expect(r.ok).toBe(false);
        expect((r as { problems: string[] }).problems[0]).toMatch(/plugin flaky setup failed: cannot reach the license server/);
      }
    } finally {
      rmSync(join(dir, "fail"));
    }
    const added = lines().slice(before.length);
    // Before: 4 setups, no teardown — each refused reload leaked the earlier plugins' setups.
    expect(added.filter((l) => l === "setup")).toHaveLength(4);
    expect(added.filter((l) => l === "teardown")).toHaveLength(4);
    expect((await chat("test/slow")).status).toBe(200); // the previous config still serves
  });
});

describe("the gateway process", () => {
  it("logs a plugin's stray rejection and keeps serving, and survives a plugin that does not await next()", async () => {
    const file = join(dir, "process.yaml");
    writeFileSync(file, YAML.stringify({ ...config(), pipeline: config().pipeline.filter((n) => n !== "counted" && n !== "flaky") }));
    const child = await startChildGateway(file, { LOG_LEVEL: "info" });
    try {
      const ask = (how: string, model = "test/slow") => postJson(`${child.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}`, "x-misbehave": how });
      expect((await ask("stray")).status).toBe(200);
      expect((await ask("forget", "nope/nope")).status).toBe(500);
      await new Promise((r) => setTimeout(r, 300));
      expect(child.proc.exitCode).toBeNull();
      expect((await ask("none")).status).toBe(200);
      await until("the rejection's log line", () => child.output().split("\n").some((l) => l.includes("unhandled promise rejection") && l.includes("keeps serving") && l.includes("stray rejection from a plugin")), 3000);
    } finally {
      await child.stop();
    }
  }, 60_000);
});
