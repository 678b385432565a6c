// What a third-party plugin does to an answer after `await next()` (throws, replaces it, drops the upstream's stream)
// is what the client gets, and the ledger says the same: one status for the wire and the record, the upstream's
// reported usage billed when it came, and an upstream stream nobody reads cancelled, its record an estimate.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { until } from "./helpers/until.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";
import { builtins } from "../core/builtins.ts";

const KEY = testKey("answer-billing");
const dir = mkdtempSync(join(tmpdir(), "mg-answer-billing-"));

// Changes the answer on its way back as the request's x-reshape header says.
writeFileSync(join(dir, "reshaper.mjs"), `export default { name: "reshaper", async handle(ctx, next) {
  const how = ctx.headers["x-reshape"];
  await next();
  const r = ctx.response;
  if (how === "throw") throw new Error("reshaper failed after next()");
  if (how === "replace" && r?.kind === "stream") ctx.response = { kind: "json", status: 200, body: { replaced: true } };
  if (how === "drop" && r?.kind === "stream") r.events = (async function* () {})();
  // Answers now (202) and keeps the upstream's stream, for the test to read after the answer ("keep") or read at once
  // in the background ("read-now"), as a plugin that queues the work does.
  if ((how === "keep" || how === "read-now") && r?.kind === "stream") {
    ctx.response = { kind: "json", status: 202, body: { queued: true } };
    globalThis.__kept.set(ctx.requestId, how === "keep" ? r.events : readAll(r.events));
  }
} };
async function readAll(events) {
  const seen = [];
  for await (const ev of events) seen.push(ev.data);
  return seen;
}
globalThis.__kept = new Map();
`);

let upstream: FakeOpenAI;
let gw: RunningGateway, log: CapturedLog, baseURL: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ text: "one two three four five six seven eight" });
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: upstream.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/m": { endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins: { reshaper: { module: join(dir, "reshaper.mjs") } },
    pipeline: ["auth", "reshaper", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
  }, {}, "info"));
});
beforeEach(() => {
  upstream.pace = undefined;
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (requestId: string, how: string, stream: boolean) =>
  postJson(`${baseURL}/chat/completions`, { model: "test/m", stream, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}`, "x-reshape": how, "x-request-id": requestId });

/** What the reshaper kept of a request: the upstream's stream ("keep"), or what its background read got ("read-now"). */
const kept = (requestId: string) => (globalThis as unknown as { __kept: Map<string, unknown> }).__kept.get(requestId);

async function readAll(events: AsyncIterable<{ data?: string }>): Promise<string[]> {
  const seen: string[] = [];
  for await (const ev of events) seen.push(ev.data ?? "");
  return seen;
}

const recordOf = (requestId: string) => until(`the ledger record of ${requestId}`, async () => (await gw.gateway.store.ledger({})).find((e) => e.requestId === requestId), 5000);

describe("a plugin that throws after next()", () => {
  it("on a JSON answer: the client's 500 is the ledger's, which bills the usage the upstream reported", async () => {
    const r = await chat("req-throw-json", "throw", false);
    expect(r.status).toBe(500);
    const record = await recordOf("req-throw-json");
    // Before: status 200, outcome ok (usage-metering wrote it as soon as next() returned).
    expect(record).toMatchObject({ status: 500, outcome: "error", estimated: false });
    const reported = upstream.requests.at(-1)!;
    expect(reported.body.stream).not.toBe(true);
    expect(record.outputTokens).toBe(8); // the fake's eight words, as its usage says
    const [line] = await log.accessOnce((l) => l.requestId === "req-throw-json", 1);
    expect(line).toMatchObject({ status: 500 });
  });

  it("on a stream: the client's 500 is the ledger's, and the upstream stream nobody reads is cancelled", async () => {
    upstream.pace = () => 1000; // still streaming when the plugin throws, and when the grace for a reader runs out
    const r = await chat("req-throw-stream", "throw", true);
    expect(r.status).toBe(500);
    const record = await recordOf("req-throw-stream");
    expect(record).toMatchObject({ status: 500, outcome: "error", estimated: true });
    // Before: the upstream call was left open, unread, until the provider's timeout.
    await until("the upstream call to be cancelled", async () => (upstream.requests.at(-1)!.abortedAt !== undefined ? true : undefined), 5000);
  });
});

describe("a plugin that replaces or drops the upstream's stream", () => {
  for (const how of ["replace", "drop"]) {
    it(`${how}: the upstream call is cancelled, the record is marked an estimate, and the log says why`, async () => {
      upstream.pace = () => 1000; // still streaming when the grace for a reader runs out
      const id = `req-${how}-stream`;
      const r = await chat(id, how, true);
      expect(r.status).toBe(200);
      if (how === "replace") expect(r.json).toEqual({ replaced: true });
      const record = await recordOf(id);
      expect(record).toMatchObject({ status: 200, estimated: true });
      // Before: the upstream went on answering into a stream nobody read, and nothing said so.
      await until("the upstream call to be cancelled", async () => (upstream.requests.at(-1)!.abortedAt !== undefined ? true : undefined), 5000);
      expect(log.records().some((l) => l.level === 40 && l.requestId === id && /stream was not relayed/.test(l.msg))).toBe(true);
    });
  }
});

describe("a plugin that answers at once and reads the upstream's stream after the answer", () => {
  it("reads it whole after the request ended, and the record bills the usage the upstream reported, with the client's 202", async () => {
    const r = await chat("req-read-later", "keep", true);
    expect(r.status).toBe(202);
    // Read only now, the client answered: before, the stream had been cut at the request's end (no events, a clean end).
    const events = await readAll(kept("req-read-later") as AsyncIterable<{ data?: string }>);
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.join("")).toContain("eight");
    const record = await recordOf("req-read-later");
    expect(record).toMatchObject({ status: 202, outcome: "ok", estimated: false, outputTokens: 8 });
    expect(upstream.requests.at(-1)!.abortedAt).toBeUndefined();
  });

  it("read in the background while the client gets 202: billed the usage the upstream reported, not an estimate", async () => {
    upstream.pace = () => 50; // the usage comes after the answer went out
    const r = await chat("req-read-now", "read-now", true);
    expect(r.status).toBe(202);
    const events = await (kept("req-read-now") as Promise<string[]>);
    expect(events.at(-1)).toBe("[DONE]");
    const record = await recordOf("req-read-now");
    // Before: 202 with 0 output tokens, estimated (written as the answer went out, the stream still being read).
    expect(record).toMatchObject({ status: 202, outcome: "ok", estimated: false, outputTokens: 8 });
    expect(record.inputTokens).toBeGreaterThan(0);
  });

  it("left unread past the grace: cancelled, billed at an estimate, and a reader that comes after gets an error, not a clean end", async () => {
    upstream.pace = () => 1000; // still streaming when the grace runs out
    const r = await chat("req-read-too-late", "keep", true);
    expect(r.status).toBe(202);
    const record = await recordOf("req-read-too-late"); // written once the stream was given up
    expect(record).toMatchObject({ status: 202, estimated: true });
    await until("the upstream call to be cancelled", async () => (upstream.requests.at(-1)!.abortedAt !== undefined ? true : undefined), 5000);
    await expect(readAll(kept("req-read-too-late") as AsyncIterable<{ data?: string }>)).rejects.toThrow(/gateway cancelled this upstream stream/);
  });
});
