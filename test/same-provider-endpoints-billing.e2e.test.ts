// A model with two endpoints on one provider (two deployments, dated snapshots) at different prices: when the first
// fails and the second answers, the request is billed at the second's prices everywhere — the ledger, the budget's
// spend, /metrics, x-mg-cost-usd and the access line. The ledger used to find the served endpoint by provider and
// model id alone and so billed the first (failed) one's prices, 100x here, while the header and the line said the
// second's. Also for a stream, and for a Messages stream the client leaves during the hold of its opening events.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import Big from "big.js";
import { keyEntry, ledgerRecordOf, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY } from "./upstreams/anthropic.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("sameprovider");
const PRICEY = { input: "0.0001", output: "0.0002" };
const CHEAP = { input: "0.000001", output: "0.000002" };

let oa: FakeOpenAI;
let claude: FakeOpenAI; // its hook answers as an Anthropic Messages upstream
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

/** Called when the Anthropic upstream has sent message_start. */
let opened: () => void = () => {};

/** The pricey deployments answer 500; the cheap one's Messages stream sends message_start (42 in, 1 out), then pings. */
function anthropicUpstream(req: { body: any }, res: ServerResponse): boolean {
  if (req.body.model === "c-pricey") {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: "deployment down" } }));
    return true;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: req.body.model, content: [], stop_reason: null, usage: { input_tokens: 42, output_tokens: 1 } } });
  opened();
  const pings = setInterval(() => event("ping", {}), 300);
  res.once("close", () => clearInterval(pings));
  return true;
}

beforeAll(async () => {
  oa = await startFakeOpenAI();
  oa.hook = (req, res) => {
    if (req.body?.model !== "up-pricey") return false;
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "deployment down", type: "server_error", param: null, code: null } }));
    return true;
  };
  claude = await startFakeOpenAI();
  claude.hook = anthropicUpstream;
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    metrics: { project_labels: true },
    providers: {
      oa: { protocol: "openai", base_url: oa.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: claude.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      "t/same": { context_window: 100_000, max_tokens: 1000, endpoints: [{ provider: "oa", model: "up-pricey", pricing: PRICEY }, { provider: "oa", model: "up-cheap", pricing: CHEAP }] },
      "t/sameclaude": { context_window: 100_000, max_tokens: 1000, endpoints: [{ provider: "claude", model: "c-pricey", pricing: PRICEY }, { provider: "claude", model: "c-cheap", pricing: CHEAP }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, {}, "info"));
});
afterAll(async () => {
  await gw?.close();
  await oa?.close();
  await claude?.close();
});

const recordOf = (requestId: string) => ledgerRecordOf(gw, requestId);

/** gateway_project_cost_usd_total of project p and the model, as /metrics shows it. */
async function costSeries(model: string): Promise<Big> {
  const text = await (await fetch(gw.metricsUrl!)).text();
  const line = text.split("\n").find((l) => l.startsWith("gateway_project_cost_usd_total{") && l.includes(`project="p"`) && l.includes(`model="${model}"`));
  return new Big(line ? line.split(" ").pop()! : "0");
}

/** The usage at the cheap endpoint's prices. */
const atCheap = (r: { inputTokens: number; outputTokens: number }) =>
  new Big(CHEAP.input).times(r.inputTokens).plus(new Big(CHEAP.output).times(r.outputTokens));

const chat = (requestId: string, stream: boolean) =>
  fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: "t/same", stream, messages: [{ role: "user", content: "which deployment?" }] }),
  });

/** The ledger record, the access line and the /metrics increase of one request; each priced at the cheap endpoint. */
async function expectBilledAtCheap(requestId: string, metricBefore: Big, provider: string) {
  const rec = await recordOf(requestId);
  const [line] = await log.accessOnce((l) => l.requestId === requestId, 1);
  expect(rec.attempts).toBe(2);
  expect(rec.inputTokens).toBeGreaterThan(0);
  expect(new Big(rec.costUsd).eq(atCheap(rec))).toBe(true);
  expect(line).toMatchObject({ provider, costUsd: rec.costUsd });
  expect(line.attempts).toHaveLength(2);
  const after = await costSeries("t/" + (provider === "oa" ? "same" : "sameclaude"));
  expect(after.minus(metricBefore).toFixed(12)).toBe(new Big(rec.costUsd).toFixed(12)); // a float sum there
  return rec;
}

describe("a model with two endpoints on one provider, the first failing", () => {
  it("JSON: ledger, x-mg-cost-usd, access line and /metrics all bill the endpoint that answered", async () => {
    const before = await costSeries("t/same");
    const id = `same-json-${Date.now()}`;
    const res = await chat(id, false);
    expect(res.status).toBe(200);
    await res.json();
    expect(res.headers.get("x-mg-upstream-model")).toBe("up-cheap");
    const rec = await expectBilledAtCheap(id, before, "oa");
    expect(res.headers.get("x-mg-cost-usd")).toBe(rec.costUsd);
  });

  it("stream: ledger, access line and /metrics bill the endpoint that answered", async () => {
    const before = await costSeries("t/same");
    const id = `same-stream-${Date.now()}`;
    const res = await chat(id, true);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("[DONE]");
    await expectBilledAtCheap(id, before, "oa");
  });

  it("a Messages stream left during the hold of its opening events bills the endpoint that had begun answering", async () => {
    const before = await costSeries("t/sameclaude");
    const id = `same-hold-${Date.now()}`;
    const ac = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    opened = () => { timer = setTimeout(() => ac.abort(), 500); }; // inside the 1 s hold
    try {
      const res = await fetch(`${baseURL}/messages`, {
        method: "POST",
        headers: { "x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json", "x-request-id": id },
        body: JSON.stringify({ model: "t/sameclaude", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
        signal: ac.signal,
      });
      for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>) { /* the client reads until it leaves */ }
    } catch {
      // the client left
    }
    clearTimeout(timer);
    const rec = await expectBilledAtCheap(id, before, "claude");
    // 42 input + 1 output tokens at $0.000001 / $0.000002: $0.000044 (the failed deployment's prices: $0.0044).
    expect(rec).toMatchObject({ inputTokens: 42, outputTokens: 1, costUsd: "0.000044", outcome: "aborted" });
  });
});
