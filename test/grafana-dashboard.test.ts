// docs/grafana/gateway.json reads only what /metrics exposes: after a smoke run (chat JSON and stream, a failing
// upstream that opens a circuit), every metric and label named in every panel's PromQL is in the exposition.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { exposition, promRefs } from "./helpers/promql.ts";

const KEY = testKey("dashboard");
const dashboard = JSON.parse(readFileSync(new URL("../docs/grafana/gateway.json", import.meta.url), "utf8"));

function exprs(): string[] {
  const out: string[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) if (t.expr) out.push(t.expr);
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

let flaky: FakeOpenAI;
let gw: TestGateway;
let metrics: Map<string, Set<string>>;
/** Each metric family's TYPE line in the exposition (counter, gauge, histogram, ...). */
let types: Map<string, string>;

beforeAll(async () => {
  flaky = await startFakeOpenAI();
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { backoff_ms: 1, circuit_breaker: { consecutive_failures: 1, cooldown_ms: 60_000 } },
    providers: { flaky: { protocol: "openai", base_url: flaky.baseUrl, api_key: "sk-fake-upstream" } },
    models: {
      "openai/gpt-4o-mini": { endpoints: [{ provider: "flaky", model: "gpt-4o-mini", pricing: { input: "0.000001", output: "0.000002" } }] },
      "test/flaky": { endpoints: [{ provider: "flaky", model: "f" }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    metrics: { project_labels: true }, // the dashboard's cost and token panels by project need them (docs/grafana)
  });
  const chat = (body: Record<string, unknown>) => postJson(`${gw.baseURL}/chat/completions`, { messages: [{ role: "user", content: "smoke" }], ...body }, { authorization: `Bearer ${KEY}` });
  expect((await chat({ model: "openai/gpt-4o-mini" })).status).toBe(200);
  expect((await chat({ model: "openai/gpt-4o-mini", stream: true, stream_options: { include_usage: true } })).status).toBe(200);
  flaky.failures.push({ kind: "status", status: 500 });
  expect((await chat({ model: "test/flaky" })).status).toBe(502);
  const text = await (await fetch(gw.metricsUrl!)).text();
  metrics = exposition(text);
  types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
});

afterAll(async () => {
  await gw?.close();
  await flaky?.close();
});

describe("docs/grafana/gateway.json", () => {
  it("covers traffic, errors, latency, tokens, cost, circuits, in-flight, memory, event-loop lag and config reloads", () => {
    const all = exprs().join("\n");
    for (const name of ["gateway_requests_total", "gateway_request_duration_seconds_bucket", "gateway_time_to_first_byte_seconds_bucket",
      "gateway_project_tokens_total", "gateway_project_cost_usd_total", "gateway_circuit_state", "gateway_requests_in_flight",
      "process_resident_memory_bytes", "nodejs_eventloop_lag_p99_seconds", "gateway_config_reloads_total"]) expect(all).toContain(name);
  });

  it("every PromQL expression names only metrics and labels that /metrics exposes", () => {
    const list = exprs();
    expect(list.length).toBeGreaterThan(15);
    const problems: string[] = [];
    for (const expr of list) {
      const refs = promRefs(expr);
      if (!refs.selectors.length) problems.push(`${expr}: reads no metric`);
      const labelsOfExpr = new Set<string>();
      for (const s of refs.selectors) {
        const labels = metrics.get(s.metric);
        if (!labels) {
          problems.push(`${expr}: no metric ${s.metric}`);
          continue;
        }
        for (const l of labels) labelsOfExpr.add(l);
        for (const l of s.labels) if (!labels.has(l)) problems.push(`${expr}: ${s.metric} has no label ${l}`);
      }
      for (const l of refs.groupingLabels) if (!labelsOfExpr.has(l)) problems.push(`${expr}: no metric in it has label ${l}`);
    }
    expect(problems).toEqual([]);
  });

  it("reads no gauge under a counter's _total name, and plots a count of handles on an axis of its own beside CPU seconds/s", () => {
    // prom-client also exports nodejs_active_handles_total, a gauge promtool warns about: the dashboard reads the plain name.
    const misnamed = exprs().flatMap((e) => promRefs(e).selectors.map((s) => s.metric))
      .filter((m) => m.endsWith("_total") && types.get(m) !== "counter");
    expect(misnamed).toEqual([]);
    const cpu = dashboard.panels.find((p: any) => (p.targets ?? []).some((t: any) => t.expr.includes("process_cpu_seconds_total")));
    const handles = cpu.targets.find((t: any) => t.expr.includes("nodejs_active_handles"));
    const own = cpu.fieldConfig.overrides.find((o: any) => o.matcher.options === handles.legendFormat);
    expect(own?.properties).toContainEqual({ id: "custom.axisPlacement", value: "right" });
  });

  it("the check fails on a metric or label that does not exist", () => {
    const refs = promRefs('sum by (tenant) (rate(gateway_requests_total{region="x"}[5m])) + gateway_no_such_metric');
    expect(metrics.has(refs.selectors[1]!.metric)).toBe(false);
    expect(metrics.get("gateway_requests_total")!.has("region")).toBe(false);
    expect(metrics.get("gateway_requests_total")!.has("tenant")).toBe(false);
  });
});
