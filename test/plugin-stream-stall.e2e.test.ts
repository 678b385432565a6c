// A third-party plugin that wraps a stream and then stalls in it (awaits forever on an event) holds its request only
// while the client is there (docs/plugins.md "Failures"): 2 s after the client leaves the request is let go, the log
// names the plugin, and the ledger keeps its record; a shutdown ends such a stream at its grace with the error event.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { until } from "./helpers/until.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";
import { ABANDON_AFTER_MS } from "../core/pipeline/abandon.ts";
import { builtins } from "../core/builtins.ts";
import { SqliteStore } from "../core/store/sqlite.ts";

const KEY = testKey("stall-stream");
const dir = mkdtempSync(join(tmpdir(), "mg-stall-stream-"));

// Passes the first event on, then never yields again (a plugin awaiting something that never comes).
writeFileSync(join(dir, "stall.mjs"), `export default { name: "stall", async handle(ctx, next) {
  await next();
  const r = ctx.response;
  if (r?.kind !== "stream") return;
  r.events = (async function* (src) {
    let i = 0;
    for await (const ev of src) { if (++i === 2) await new Promise(() => {}); yield ev; }
  })(r.events);
} };
`);

let upstream: FakeOpenAI;
let gw: RunningGateway | undefined;
let log: CapturedLog;
let dbFile: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ text: "one two three four five six", chunkDelayMs: 20 });
});
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<string> {
  const started = await startLoggedGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: { up: { protocol: "openai", base_url: upstream.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/m": { endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins: { stall: { module: join(dir, "stall.mjs") } },
    pipeline: ["auth", "stall", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
  }, {}, "info");
  ({ gw, log } = started);
  dbFile = join(started.dir, "gateway.db");
  return started.baseURL;
}

/** Opens a stream and resolves once its first bytes are here, with the reader and the request id. */
async function openStream(baseURL: string, requestId: string, signal?: AbortSignal) {
  const res = await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "x-request-id": requestId },
    body: JSON.stringify({ model: "test/m", stream: true, messages: [{ role: "user", content: "hi" }] }),
    signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toMatch(/^data: /);
  return reader;
}

async function rest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = "";
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) return text;
    text += new TextDecoder().decode(value);
  }
}

async function ledgerOf(file: string, requestId: string) {
  const store = new SqliteStore(file);
  try {
    return (await store.ledger({ project: "p" })).filter((e) => e.requestId === requestId);
  } finally {
    await store.close();
  }
}

describe("a plugin whose stream wrapper stalls", () => {
  it("is let go once the client has left: in-flight back to 0, the log names the plugin, the ledger records it as aborted", async () => {
    const baseURL = await start();
    const client = new AbortController();
    await openStream(baseURL, "req-stall-left", client.signal);
    client.abort();
    // Before: held for ever (in-flight stayed 1, no ledger record, a SIGTERM waited out its grace and more).
    await until("the request to be let go", async () => (gw!.gateway.inflight.size === 0 ? true : undefined), ABANDON_AFTER_MS + 5000, 25);
    const named = log.records().filter((l) => l.level >= 50 && l.requestId === "req-stall-left" && l.plugin === "stall");
    expect(named.map((l) => l.msg)).toEqual([expect.stringMatching(/stream.*plugin "stall".*had not ended after the request was aborted/)]);
    const [line] = await log.accessOnce((l) => l.requestId === "req-stall-left", 1);
    expect(line).toMatchObject({ aborted: true });
    const record = await until("the ledger record", async () => (await gw!.gateway.store.ledger({})).find((e) => e.requestId === "req-stall-left"), 5000);
    expect(record).toMatchObject({ outcome: "aborted", status: 200 });
    expect(record.inputTokens).toBeGreaterThan(0); // billed: the upstream was called
  }, 20_000);

  it("is ended at a shutdown's grace with the error event, and keeps its ledger record", async () => {
    const baseURL = await start();
    const reader = await openStream(baseURL, "req-stall-shutdown");
    const text = rest(reader);
    await gw!.shutdown({ graceMs: 100 });
    gw = undefined;
    // Before: the stream was never ended (its socket dropped after the cut's wait), the shutdown reported it
    // unfinished and the store closed without its record.
    expect(await text).toMatch(/"code":"INTERNAL".*shutting down/);
    const done = log.records().find((l) => l.msg === "shutdown complete");
    expect(done).toBeDefined();
    expect(done!.unfinished).toBeUndefined();
    expect(log.records().some((l) => l.level >= 50 && l.requestId === "req-stall-shutdown" && l.plugin === "stall")).toBe(true);
    expect((await ledgerOf(dbFile, "req-stall-shutdown")).map((e) => [e.status, e.outcome])).toEqual([[200, "stream_error"]]); // the status sent; the error went in-band
  }, 30_000);
});
