// The series the config determines are on /metrics at 0 before their first count (core/metrics-seed.ts): Prometheus'
// rate()/increase() see only changes between scrapes, so a series born at its first count lost it — the dashboard's
// "Cost in the range" showed $0.00065 for $0.00245 spent. A reload seeds what the new config names and drops the
// zeros of what it no longer names; a counted series stays.
import { writeFileSync } from "node:fs";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("seeded");

let fake: FakeOpenAI;
let gw: TestGateway;

const config = (over: { embed?: boolean; projectLabels?: boolean } = {}) => ({
  store: { kind: "memory" },
  providers: {
    up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" },
    old: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-old" },
  },
  models: {
    "t/chat": { endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000002", output: "0.00001", input_cache_read: "0.0000002" } }] },
    // Its first endpoint has retired: the router sends it to the second, so the seeds go there.
    "t/moved": { endpoints: [{ provider: "old", model: "m", retires: "2020-01-01" }, { provider: "up", model: "m" }] },
    // Every endpoint retired: a 404, so nothing to seed.
    "t/gone": { endpoints: [{ provider: "up", model: "m", retires: "2020-01-01" }] },
    ...(over.embed === false ? {} : { "t/embed": { type: "embedding", endpoints: [{ provider: "up", model: "e", pricing: { input: "0.0000001" } }] } }),
  },
  projects: {
    listed: { keys: [keyEntry("k", KEY)], allow_models: ["t/chat", "t/embed", "t/moved", "t/gone"] },
    open: { keys: [keyEntry("k2", testKey("seeded-open"))], allow_models: ["*"] },
  },
  metrics: { project_labels: over.projectLabels ?? true },
});

async function scrape(): Promise<string> {
  return (await fetch(gw.metricsUrl!)).text();
}

/** The value of one series, by its exact label text as /metrics writes it; undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Reload with `c` written to the file, and wait until /metrics shows `settled`. */
async function reloadTo(c: Record<string, unknown>, settled: (text: string) => boolean): Promise<string> {
  writeFileSync(gw.configFile, YAML.stringify(c));
  expect((await gw.gateway.reload(gw.configFile)).ok).toBe(true);
  for (let i = 0; i < 50; i++) {
    const text = await scrape();
    if (settled(text)) return text;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the reload's series never showed");
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  gw = await startTestGateway(config());
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe("series the config determines", () => {
  it("are on /metrics at 0 before any request: requests 200/502 per endpoint, tokens, per-project cost of listed models, cache hit/miss", async () => {
    const text = await scrape();
    for (const endpoint of ["chat", "messages", "responses", "gemini"]) {
      for (const code of ["200", "502"]) expect(value(text, `gateway_requests_total{endpoint="${endpoint}",model="t/chat",provider="up",code="${code}"}`)).toBe(0);
    }
    expect(value(text, 'gateway_requests_total{endpoint="embeddings",model="t/embed",provider="up",code="200"}')).toBe(0);
    expect(value(text, 'gateway_requests_total{endpoint="chat",model="t/embed",provider="up",code="200"}')).toBeUndefined();
    for (const d of ["input", "output", "cache_read"]) expect(value(text, `gateway_tokens_total{direction="${d}",model="t/chat",provider="up"}`)).toBe(0);
    expect(value(text, 'gateway_tokens_total{direction="cache_write",model="t/chat",provider="up"}')).toBeUndefined(); // not priced
    expect(value(text, 'gateway_tokens_total{direction="input",model="t/embed",provider="up"}')).toBe(0);
    // No histogram is seeded (20 series per label set): requests_total's code="502" shows the failures.
    expect(text).not.toContain("gateway_upstream_duration_seconds_count{");
    expect(value(text, 'gateway_project_cost_usd_total{project="listed",model="t/chat"}')).toBe(0);
    expect(value(text, 'gateway_project_tokens_total{project="listed",model="t/chat",direction="output"}')).toBe(0);
    // A project allowed every model gets none: the cross product would grow with the catalog.
    expect(text).not.toMatch(/project="open"/);
    expect(value(text, 'gateway_cache_requests_total{endpoint="chat",result="hit"}')).toBe(0);
    expect(value(text, 'gateway_cache_requests_total{endpoint="chat",result="miss"}')).toBe(0);
  });

  it("go to the provider the router uses today: past a retired first endpoint, and none for a model with every endpoint retired", async () => {
    const text = await scrape();
    expect(value(text, 'gateway_requests_total{endpoint="chat",model="t/moved",provider="up",code="200"}')).toBe(0);
    expect(value(text, 'gateway_tokens_total{direction="input",model="t/moved",provider="up"}')).toBe(0);
    expect(text).not.toContain('provider="old"');
    expect(text).not.toContain('model="t/gone"');
    // A request to the moved model counts on its seeded series.
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "t/moved", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(200);
    expect(value(await scrape(), 'gateway_requests_total{endpoint="chat",model="t/moved",provider="up",code="200"}')).toBe(1);
  });

  it("a request counts on its seeded series (one series, not a second)", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: "t/chat", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    expect(r.status).toBe(200);
    const text = await scrape();
    expect(value(text, 'gateway_requests_total{endpoint="chat",model="t/chat",provider="up",code="200"}')).toBe(1);
    expect(text.split("\n").filter((l) => l.startsWith('gateway_requests_total{endpoint="chat",model="t/chat",provider="up",code="200"}'))).toHaveLength(1);
    expect(value(text, 'gateway_project_cost_usd_total{project="listed",model="t/chat"}')).toBeGreaterThan(0);
  });

  it("a reload drops the zeros of what it no longer names, keeps what was counted, and project_labels off drops the per-project series", async () => {
    const gone = 'gateway_requests_total{endpoint="embeddings",model="t/embed",provider="up",code="200"}';
    let text = await reloadTo(config({ embed: false }), (t) => value(t, gone) === undefined);
    expect(value(text, 'gateway_tokens_total{direction="input",model="t/embed",provider="up"}')).toBeUndefined();
    expect(value(text, 'gateway_project_cost_usd_total{project="listed",model="t/embed"}')).toBeUndefined();
    expect(value(text, 'gateway_requests_total{endpoint="chat",model="t/chat",provider="up",code="200"}')).toBe(1);
    expect(value(text, 'gateway_requests_total{endpoint="chat",model="t/chat",provider="up",code="502"}')).toBe(0);
    text = await reloadTo(config({ embed: false, projectLabels: false }), (t) => !t.includes("gateway_project_cost_usd_total"));
    expect(text).not.toContain("gateway_project_tokens_total");
    // Turned on again: seeded again.
    text = await reloadTo(config({ embed: false }), (t) => t.includes('gateway_project_cost_usd_total{project="listed",model="t/chat"}'));
    expect(value(text, 'gateway_project_cost_usd_total{project="listed",model="t/chat"}')).toBe(0);
  });
});
