// docs/grafana/gateway.json against a real Prometheus scraping a real gateway: every panel's PromQL is accepted and
// returns series after traffic that touches every panel, and the error panels name the fault — the provider that
// failed, the model asked for, the policy's code. (test/grafana-dashboard.test.ts checks names by tokenising.)
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { auth, chat, KEY, policyConfig } from "./helpers/policy-config.ts";
import { metricsUrl, startPrometheus, type PromSample, type TestPrometheus } from "./helpers/prometheus.ts";

const LIMITED = testKey("promlimited");
const POOR = testKey("prompoor");
const dashboard = JSON.parse(readFileSync(new URL("../docs/grafana/gateway.json", import.meta.url), "utf8"));

interface Query { panel: string; expr: string }
function queries(): Query[] {
  const out: Query[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ panel: `${p.title} (${t.refId})`, expr: t.expr });
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

/** Grafana's range variables, as it would fill them for a short dashboard range. */
const concrete = (expr: string) => expr.replace(/\$__(rate_interval|interval|range)\b/g, "2m");

let up: FakeOpenAI;
let gw: TestGateway;
let prom: TestPrometheus;

/**
 * One round of traffic: served chats (JSON and stream), a provider that is down, a healthy provider refusing a
 * client's bad request (its 400), and each policy's refusal.
 */
async function round(): Promise<void> {
  const send = (body: unknown, key = KEY) => postJson(`${gw.baseURL}/chat/completions`, body, auth(key));
  expect((await send(chat())).status).toBe(200);
  expect((await send(chat("openai/gpt-4o-mini", { stream: true, stream_options: { include_usage: true } }))).status).toBe(200);
  expect((await send(chat("openai/down"))).status).toBe(502);
  up.failures.push({ kind: "status", status: 400 });
  expect((await send(chat())).status).toBe(400);
  expect((await send(chat("anthropic/claude-x"))).status).toBe(403);
  expect((await send(chat(), POOR)).status).toBe(402);
  expect([200, 429]).toContain((await send(chat(), LIMITED)).status);
  expect((await send(chat(), LIMITED)).status).toBe(429);
}

beforeAll(async () => {
  up = await startFakeOpenAI();
  const config = policyConfig(up.baseUrl, { store: { kind: "sqlite", path: "gateway.db" } }) as any;
  // A provider nobody listens for: every attempt fails with a connection error (502). One attempt per request, and
  // its circuit opens on the second failure, in the second round.
  config.providers.down = { protocol: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-down" };
  config.models["openai/down"] = { type: "language", endpoints: [{ provider: "down", model: "down" }] };
  config.routing = { max_attempts: 1, backoff_ms: 1, circuit_breaker: { consecutive_failures: 2 } };
  config.projects.limited = { keys: [keyEntry("lk", LIMITED, { rate_limits: { rpm: 1 } })] };
  config.projects.poor = { keys: [keyEntry("pk", POOR)], budget: { usd: "0.000001", period: "total" } };
  gw = await startTestGateway(config);
  prom = await startPrometheus(metricsUrl(gw));
  // rate() needs a series to grow between two scrapes: one round creates every series, the next one grows them.
  await prom.nextScrape();
  await round();
  await prom.nextScrape();
  await round();
  await prom.nextScrape();
  await prom.nextScrape(); // increase() of a series born in the second round needs two of its samples
}, 90_000);

afterAll(async () => {
  await prom?.stop();
  await gw?.close();
  await up?.close();
});

const value = (rows: PromSample[], labels: Record<string, string>) =>
  rows.find((r) => Object.entries(labels).every(([k, v]) => r.metric[k] === v))?.value;

describe("the dashboard on a real Prometheus", () => {
  it("Prometheus accepts every panel's query, and each returns series", async () => {
    const empty: string[] = [];
    for (const q of queries()) {
      const rows = await prom.query(concrete(q.expr)); // throws with Prometheus's error for a query it refuses
      if (!rows.length) empty.push(`${q.panel}: ${q.expr}`);
    }
    expect(empty).toEqual([]);
  });

  it("the 5xx ratio by provider shows the provider that is down, and the healthy one at 0", async () => {
    const q = queries().find((x) => x.panel.startsWith("Error ratio (5xx) by provider"))!;
    const rows = await prom.query(concrete(q.expr));
    expect(value(rows, { provider: "down" })).toBe(1);
    expect(value(rows, { provider: "up" })).toBe(0);
    expect(rows.every((r) => r.metric.provider !== "")).toBe(true);
  });

  it("the 5xx ratio by model shows the failing model; the 4xx panel names the model each policy refused", async () => {
    const ratio = await prom.query(concrete(queries().find((x) => x.panel.startsWith("Error ratio (5xx) by model"))!.expr));
    expect(value(ratio, { model: "openai/down" })).toBe(1);
    expect(value(ratio, { model: "openai/gpt-4o-mini" })).toBe(0);
    const refused = await prom.query(concrete(queries().find((x) => x.panel.startsWith("Client errors (4xx)"))!.expr));
    for (const [model, code] of [["anthropic/claude-x", "403"], ["openai/gpt-4o-mini", "402"], ["openai/gpt-4o-mini", "429"]]) {
      expect(value(refused, { model: model!, code: code! }), `${model} ${code}`).toBeGreaterThan(0);
    }
    expect(value(refused, { model: "" })).toBeUndefined();
  });

  it("failed upstream attempts show the provider that is down, not the healthy one that refused a client's bad request", async () => {
    const failed = await prom.query(concrete(queries().find((x) => x.panel.startsWith("Failed upstream attempts"))!.expr));
    expect(value(failed, { provider: "down" })).toBeGreaterThan(0);
    expect(value(failed, { provider: "up" })).toBeUndefined();
    // The refused attempts are counted, as the client's: outcome client_error.
    const refused = await prom.query('sum by (provider) (increase(gateway_upstream_duration_seconds_count{outcome="client_error"}[2m]))');
    expect(value(refused, { provider: "up" })).toBeGreaterThan(0);
  });

  it("the config reload panel shows the last reload succeeded", async () => {
    const panel = dashboard.panels.find((p: any) => p.title === "Config reloads");
    const last = await prom.query(concrete(panel.targets.find((t: any) => t.refId === "B").expr));
    expect(last.map((r) => r.value)).toEqual([1]);
  });
});
