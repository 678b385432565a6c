// An upstream may answer anything (docs/security.md), its usage figures included — a tenant's own BYOK base_url as
// much as a provider's bug. On the shipped store (SQLite): `prompt_tokens: 1e20` made a cost too large for the ledger's
// 64-bit column, so the record could not be written, the store was marked down (every budgeted request of every
// project refused with 503) and the spool replayed the same record, failing, forever; `completion_tokens: -100000`
// lowered the project's spend and broke /metrics ("It is not possible to decrease a counter"). Usage is now made
// sane where the gateway bills it: counts capped, negative or non-finite ones treated as missing (estimated).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import type { ServerResponse } from "node:http";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, OTHER, policyConfig } from "./helpers/policy-config.ts";
import { MAX_USAGE_TOKENS } from "../core/metering/sane-usage.ts";

const TEXT = "A perfectly ordinary answer.";
/** gpt-4o-mini's context_window in policyConfig. */
const CONTEXT_WINDOW = 1000;

/** The usage an upstream reports for a prompt that names it (JSON text): none, absurd, negative, or (else) ordinary. */
function usageFor(prompt: string): string | undefined {
  if (prompt.includes("NO USAGE")) return undefined;
  if (prompt.includes("HUGE")) return JSON.stringify({ prompt_tokens: 1e20, completion_tokens: 5, total_tokens: 1e20 });
  if (prompt.includes("ABSURD")) return JSON.stringify({ prompt_tokens: 1e308, completion_tokens: 1e308, total_tokens: 1e308 });
  // Past a double's range: JSON.parse reads Infinity.
  if (prompt.includes("INFINITE")) return `{"prompt_tokens":1e400,"completion_tokens":1e400,"total_tokens":1e400}`;
  if (prompt.includes("NEGATIVE")) return JSON.stringify({ prompt_tokens: 10, completion_tokens: -100000, total_tokens: -99990 });
  return JSON.stringify({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
}

/** `o` as JSON with its usage written as the raw text `usage` (which may hold numbers JSON.stringify cannot write). */
const withUsage = (o: object, usage: string | undefined) => (usage === undefined ? JSON.stringify(o) : `${JSON.stringify(o).slice(0, -1)},"usage":${usage}}`);

function answer(body: any, res: ServerResponse): void {
  const usage = usageFor(JSON.stringify(body.messages));
  const base = { id: "chatcmpl-odd", created: 1, model: body.model, system_fingerprint: "fp_odd" };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(withUsage({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: TEXT }, finish_reason: "stop" }] }, usage));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  res.end(
    frame({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: TEXT }, finish_reason: null }] }) +
    frame({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
    (usage === undefined ? "" : `data: ${withUsage({ ...base, object: "chat.completion.chunk", choices: [] }, usage)}\n\n`) +
    "data: [DONE]\n\n",
  );
}

let fake: FakeOpenAI;
let gw: TestGateway;
let db: Database.Database;
const dbPath = () => `${gw.dir}/gateway.db`;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.hook = (rec, res) => {
    if (rec.path !== "/v1/chat/completions") return false;
    answer(rec.body, res);
    return true;
  };
  gw = await startTestGateway(policyConfig(fake.baseUrl, {
    store: { kind: "sqlite", path: "./gateway.db", spool_dir: "./spool", probe_interval_ms: 100 },
    acme: { budget: { usd: "100000", period: "month" } },
    other: { budget: { usd: "10", period: "month" } },
  }));
  db = new Database(dbPath(), { readonly: true, fileMustExist: true });
}, 30_000);

afterAll(async () => {
  db?.close();
  await gw?.close();
  await fake?.close();
});

const ledger = (requestId: string) =>
  db.prepare("SELECT * FROM ledger_all WHERE request_id = ?").get(requestId) as Record<string, any> | undefined;

async function ask(requestId: string, prompt: string, stream = false, key?: string) {
  const res = await postJson(`${gw.baseURL}/chat/completions`, {
    model: "openai/gpt-4o-mini", messages: [{ role: "user", content: prompt }], max_tokens: 50, stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  }, auth(key, { "x-request-id": requestId }));
  return res;
}

/** The store is up, another project's budgeted request is served, and /metrics scrapes. */
async function expectGatewayWhole(tag: string) {
  const ready = await fetch(`${gw.url}/readyz`);
  expect(ready.status, await ready.text()).toBe(200);
  const other = await ask(`after-${tag}`, "an ordinary question", false, OTHER);
  expect(other.status, other.text).toBe(200);
  const metrics = await fetch(gw.metricsUrl!);
  const text = await metrics.text();
  expect(metrics.status, text.slice(0, 300)).toBe(200);
  // No per-project series went below zero or to an absurd figure.
  for (const m of text.matchAll(/^gateway_project_(?:tokens|cost_usd)_total\{[^}]*\} (\S+)$/gm)) {
    expect(Number(m[1])).toBeGreaterThanOrEqual(0);
    expect(Number(m[1])).toBeLessThan(1e12);
  }
  return text;
}

function spend(project: string): bigint {
  return (db.prepare("SELECT COALESCE(SUM(cost_pico), 0) AS s FROM ledger_all WHERE project = ?").safeIntegers(true).get(project) as { s: bigint }).s;
}

/** The request is let go: no in-flight slot left for a shutdown to wait on (SIGTERM waited 40 s for one). */
async function expectLetGo() {
  const until = Date.now() + 3000;
  const gauge = async () => Number(/^gateway_requests_in_flight\{endpoint="(?:chat|gemini)"\} (\d+)/m.exec(await (await fetch(gw.metricsUrl!)).text())?.[1] ?? 0);
  while (gw.gateway.inflight.size > 0 || (await gauge()) > 0) {
    if (Date.now() > until) throw new Error(`still in flight: ${gw.gateway.inflight.size}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("absurd usage from an upstream (SQLite store)", () => {
  it.each([false, true])("prompt_tokens 1e20 (stream: %s): answered, billed at the context window, the store stays up", async (stream) => {
    const id = `huge-${stream}`;
    const res = await ask(id, "HUGE usage please", stream);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("perfectly ordinary");
    const row = ledger(id);
    expect(row, "the record is in the ledger").toBeDefined();
    expect(row!.input_tokens).toBe(CONTEXT_WINDOW); // the most one call can read, not MAX_USAGE_TOKENS
    expect(row!.output_tokens).toBe(5);
    expect(row!.estimated).toBe(1); // not the provider's figure
    expect(BigInt(row!.cost_pico)).toBe(BigInt(CONTEXT_WINDOW) * 1_000_000n + 5n * 2_000_000n);
    await expectGatewayWhole(id);
    // The budgeted project itself is served afterwards too.
    expect((await ask(`${id}-next`, "an ordinary question")).status).toBe(200);
  });

  it.each([false, true])("1e308 tokens each way (stream: %s): billed within the request's limits, the cost header agrees", async (stream) => {
    const id = `absurd-${stream}`;
    const before = spend("acme");
    const res = await ask(id, "ABSURD usage please", stream);
    expect(res.status, res.text).toBe(200);
    const row = ledger(id)!;
    expect(row, "the record is in the ledger").toBeDefined();
    // Input within the model's context window, output within the request's max_tokens (50): cents, not $750.
    expect(row.input_tokens).toBe(CONTEXT_WINDOW);
    expect(row.output_tokens).toBe(50);
    expect(row.estimated).toBe(1);
    const cost = BigInt(CONTEXT_WINDOW) * 1_000_000n + 50n * 2_000_000n;
    expect(BigInt(row.cost_pico)).toBe(cost);
    expect(spend("acme") - before).toBe(cost);
    expect(row.input_tokens).toBeLessThan(MAX_USAGE_TOKENS);
    // A JSON answer's header prices what the ledger bills (it showed ~7.5e304 USD).
    if (!stream) expect(res.headers.get("x-mg-cost-usd")).toBe(row.cost_usd);
    await expectGatewayWhole(id);
  });

  it.each([false, true])("completion_tokens -100000 (stream: %s): the output is estimated, spend never goes down", async (stream) => {
    const id = `negative-${stream}`;
    const before = spend("acme");
    const res = await ask(id, "NEGATIVE usage please", stream);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("perfectly ordinary");
    const row = ledger(id);
    expect(row, "the record is in the ledger").toBeDefined();
    expect(row!.input_tokens).toBe(10);
    expect(row!.output_tokens).toBeGreaterThan(0); // the text it relayed, estimated
    expect(row!.estimated).toBe(1);
    expect(row!.cost_usd).not.toMatch(/^-/);
    expect(BigInt(row!.cost_pico)).toBeGreaterThan(0n);
    expect(spend("acme")).toBeGreaterThan(before);
    await expectGatewayWhole(id);
    // /metrics keeps scraping (a counter given a negative value broke every later scrape).
    expect((await fetch(gw.metricsUrl!)).status).toBe(200);
  });

  // The gateway may refuse such an answer as invalid (502) or bill it estimated (200); either way the client gets its
  // protocol's answer with its own request id, the ledger records that answer under that id, and the request ends.
  it.each([false, true])("usage 1e400 (Infinity once parsed) (stream: %s): answered under the request's own id, let go", async (stream) => {
    const id = `infinite-${stream}`;
    const res = await ask(id, "INFINITE usage please", stream);
    expect([200, 502], res.text).toContain(res.status);
    expect(res.headers.get("x-request-id")).toBe(id);
    if (res.status === 200) expect(res.text).toContain("perfectly ordinary");
    else expect(res.json?.error?.code).toBe("UPSTREAM_ERROR");
    const row = ledger(id);
    expect(row, "the record is under the request's id").toBeDefined();
    expect(row!.status).toBe(res.status);
    if (res.status === 200) {
      expect(row!.estimated).toBe(1);
      expect(row!.output_tokens).toBeGreaterThan(0);
      expect(row!.output_tokens).toBeLessThanOrEqual(50);
      if (!stream) expect(res.headers.get("x-mg-cost-usd")).toBe(row!.cost_usd);
    }
    await expectLetGo();
    await expectGatewayWhole(id);
  });

  it("no usage at all (JSON answer): x-mg-cost-usd prices the estimate the ledger bills", async () => {
    const res = await ask("no-usage-header", "NO USAGE please");
    expect(res.status, res.text).toBe(200);
    const row = ledger("no-usage-header")!;
    expect(row.estimated).toBe(1);
    expect(BigInt(row.cost_pico)).toBeGreaterThan(0n);
    expect(res.headers.get("x-mg-cost-usd")).toBe(row.cost_usd);
  });
});

describe("usage an upstream got wrong, to a Gemini client", () => {
  const gemini = (id: string, prompt: string, stream = false) =>
    postJson(`${gw.url}/api/v1beta/models/openai/gpt-4o-mini:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`, {
      contents: [{ role: "user", parts: [{ text: prompt }] }], generationConfig: { maxOutputTokens: 50 },
    }, auth(undefined, { "x-request-id": id }));

  it("usage 1e400: the Gemini client gets Google's envelope with its request id, and the request is let go", async () => {
    const res = await gemini("gemini-infinite", "INFINITE usage please");
    expect([200, 502], res.text).toContain(res.status);
    expect(res.headers.get("x-request-id")).toBe("gemini-infinite");
    if (res.status === 200) expect(res.json?.candidates?.[0]?.content?.parts?.[0]?.text).toContain("perfectly ordinary");
    else expect(res.json?.error?.status).toBe("UNAVAILABLE"); // not {"status":500,"unhandled":true}
    expect(ledger("gemini-infinite")?.status).toBe(res.status);
    await expectLetGo();
  });

  it.each([false, true])("no usage at all (stream: %s): input and output are estimated, as for a chat client", async (stream) => {
    const id = `gemini-no-usage-${stream}`;
    const res = await gemini(id, "NO USAGE please", stream);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("perfectly ordinary");
    const row = ledger(id);
    expect(row, "the record is in the ledger").toBeDefined();
    expect(row!.estimated).toBe(1);
    expect(row!.input_tokens).toBeGreaterThan(0);
    expect(row!.output_tokens).toBeGreaterThan(0); // it billed 0/0, $0
    expect(BigInt(row!.cost_pico)).toBeGreaterThan(0n);
  });

  it("completion_tokens -100000: the output is estimated, not billed 0", async () => {
    const res = await gemini("gemini-negative", "NEGATIVE usage please");
    expect(res.status, res.text).toBe(200);
    const row = ledger("gemini-negative");
    expect(row!.input_tokens).toBe(10);
    expect(row!.output_tokens).toBeGreaterThan(0);
    expect(row!.estimated).toBe(1);
  });
});
