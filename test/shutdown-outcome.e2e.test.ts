// What a graceful shutdown does to JSON (non-stream) requests in flight: one cut at the end of the grace period is
// the gateway's 503, not a client that left (no "aborted", ledger outcome error, no error-level line); and once the
// shutdown has begun no new retry or fallback attempt starts (the request ends with the shutdown's 503).
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";
import { SqliteStore } from "../core/store/sqlite.ts";
import type { LedgerEntry } from "../core/store/types.ts";

const KEY = testKey("shutdown-json");
const PRICING = { input: "0.000002", output: "0.00001" };

let alpha: FakeOpenAI;
let beta: FakeOpenAI;
let gw: RunningGateway | undefined;

beforeAll(async () => {
  alpha = await startFakeOpenAI({ text: "alpha answers" });
  beta = await startFakeOpenAI({ text: "beta answers" });
});
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  alpha.failures.length = 0;
  alpha.requests.length = 0;
  beta.requests.length = 0;
});
afterAll(async () => {
  await alpha?.close();
  await beta?.close();
});

/** A gateway on SQLite (its ledger outlives the shutdown) whose model falls back from alpha to beta. */
async function start(): Promise<{ log: CapturedLog; baseURL: string; dbFile: string }> {
  const provider = (url: string) => ({ protocol: "openai", base_url: url, api_key: "sk-fake-upstream", timeout_ms: 600 });
  const started = await startLoggedGateway({
    store: { kind: "sqlite", path: "./gateway.db" },
    routing: { backoff_ms: 1 },
    providers: { alpha: provider(alpha.baseUrl), beta: provider(beta.baseUrl) },
    models: { "test/duo": { endpoints: [{ provider: "alpha", model: "a-model", pricing: PRICING }, { provider: "beta", model: "b-model", pricing: PRICING }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  gw = started.gw;
  return { log: started.log, baseURL: started.baseURL, dbFile: join(started.dir, "gateway.db") };
}

async function ledgerOf(dbFile: string): Promise<LedgerEntry[]> {
  const store = new SqliteStore(dbFile);
  try {
    return await store.ledger({ project: "p" });
  } finally {
    await store.close();
  }
}

const chat = (baseURL: string, requestId: string) =>
  postJson(`${baseURL}/chat/completions`, { model: "test/duo", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}`, "x-request-id": requestId });

/** Resolves once alpha has the request (the first attempt is under way). */
async function alphaHasIt(): Promise<void> {
  while (alpha.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
}

describe("a JSON request in flight during a shutdown", () => {
  it("cut at the end of the grace period: the gateway's 503, recorded as an error, not as a client that left", async () => {
    const { log, baseURL, dbFile } = await start();
    alpha.failures.push({ kind: "hang" }, { kind: "hang" });
    const answer = chat(baseURL, "req-cut-json");
    await alphaHasIt();
    await gw!.shutdown({ graceMs: 100 }); // alpha's timeout (600 ms) is far off: the cut ends it
    gw = undefined;
    const r = await answer;
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: "INTERNAL", message: expect.stringMatching(/shutting down/) });
    const [line] = await log.accessOnce((l) => l.requestId === "req-cut-json", 1);
    expect(line).toMatchObject({ status: 503, errorCode: "INTERNAL", aborted: false });
    expect(log.records().filter((l) => l.level >= 50 && l.requestId === "req-cut-json")).toEqual([]);
    const mine = (await ledgerOf(dbFile)).filter((e) => e.requestId === "req-cut-json");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ status: 503, outcome: "error" });
  });

  it("whose upstream times out once the shutdown has begun: no fallback attempt starts, the shutdown's 503 instead", async () => {
    const { log, baseURL, dbFile } = await start();
    alpha.failures.push({ kind: "hang" });
    const answer = chat(baseURL, "req-no-retry");
    await alphaHasIt();
    const stopped = gw!.shutdown({ graceMs: 5000 }); // the grace period outlasts alpha's timeout (600 ms)
    const r = await answer;
    await stopped;
    gw = undefined;
    expect(beta.requests).toHaveLength(0);
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: "INTERNAL", message: expect.stringMatching(/shutting down/) });
    expect(r.headers.get("retry-after")).toBe("1");
    const [line] = await log.accessOnce((l) => l.requestId === "req-no-retry", 1);
    expect(line).toMatchObject({ status: 503, aborted: false });
    expect(line.attempts).toEqual([expect.objectContaining({ provider: "alpha", errorCode: "UPSTREAM_TIMEOUT" })]);
    expect(log.records().filter((l) => l.level >= 50 && l.requestId === "req-no-retry")).toEqual([]);
    const mine = (await ledgerOf(dbFile)).filter((e) => e.requestId === "req-no-retry");
    expect(mine[0]).toMatchObject({ status: 503, outcome: "error", attempts: 1 });
  });
});
