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
} };
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
    upstream.pace = () => 200; // still streaming when the plugin throws
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
      upstream.pace = () => 200;
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
