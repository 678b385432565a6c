// A plugin's metrics live as long as a config with that plugin serves. Before: a plugin removed from the config kept
// its counter, frozen, on /metrics until a restart, and its gauge's `collect` ran on every scrape against the state its
// teardown had closed: one that threw made the whole /metrics a 500 (every gateway metric lost to Prometheus). A
// `collect` that throws now costs only its own metric, logged naming the plugin; and gateway.metrics.counter() no
// longer hands a plugin the gateway's own metric of that name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("metriclife");
const dir = mkdtempSync(join(tmpdir(), "mg-plugin-metric-life-"));
writeFileSync(join(dir, "pool.mjs"), `export default {
  name: "pool",
  setup(gateway) {
    const state = { n: 3, closed: false };
    gateway.metrics.gauge({ name: "acme_pool_size", help: "Connections open.", collect() { if (state.closed) throw new Error("pool closed"); this.set(state.n); } });
    state.seen = gateway.metrics.counter({ name: "acme_pool_requests_total", help: "Requests seen." });
    return state;
  },
  teardown(state) { state.closed = true; },
  async handle(ctx, next, { state }) { state.seen.inc(); await next(); },
};
`);
writeFileSync(join(dir, "flaky.mjs"), `export default {
  name: "flaky",
  setup(gateway) { gateway.metrics.gauge({ name: "acme_flaky_depth", help: "h", collect() { throw new Error("queue gone"); } }); },
  handle: (ctx, next) => next(),
};
`);
writeFileSync(join(dir, "clash.mjs"), `export default {
  name: "clash",
  setup(gateway) { gateway.metrics.counter({ name: "gateway_connections_dropped_total", help: "mine" }).inc(1000); },
  handle: (ctx, next) => next(),
};
`);
writeFileSync(join(dir, "bad.mjs"), `export default {
  name: "bad",
  setup() { throw new Error("bad setup"); },
  handle: (ctx, next) => next(),
};
`);
writeFileSync(join(dir, "lazy.mjs"), `export default {
  name: "lazy",
  setup(gateway) { gateway.metrics.counter({ name: "gateway_cache_requests_total", help: "mine" }); },
  handle: (ctx, next) => next(),
};
`);
const config = (plugins: string[]) => ({
  store: { kind: "memory" },
  providers: { sim: { protocol: "sim" } },
  models: { "sim/echo": { endpoints: [{ provider: "sim", model: "echo" }] } },
  projects: { p: { keys: [keyEntry("k", KEY)] } },
  plugins: Object.fromEntries(plugins.map((p) => [p, { module: join(dir, `${p}.mjs`) }])),
  pipeline: ["auth", ...plugins, "router"],
});

let gw: RunningGateway, baseURL: string, log: CapturedLog;
beforeAll(async () => {
  ({ gw, baseURL, log } = await startLoggedGateway(config(["pool"]), {}, "info"));
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chat = () => fetch(`${baseURL}/chat/completions`, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
  body: JSON.stringify({ model: "sim/echo", messages: [{ role: "user", content: "hi" }] }),
});
const reload = (plugins: string[]) => {
  writeFileSync(gw.gateway.config.file, YAML.stringify(config(plugins)));
  return gw.gateway.reload(gw.gateway.config.file);
};
const scrape = async () => {
  const r = await fetch(gw.metricsUrl!);
  return { status: r.status, lines: (await r.text()).split("\n") };
};

describe("a plugin's metrics", () => {
  it("stay across a reload that keeps the plugin, and leave /metrics once a reload removes it", async () => {
    expect((await chat()).status).toBe(200);
    expect(await reload(["pool"])).toMatchObject({ ok: true });
    expect((await chat()).status).toBe(200);
    let m = await scrape();
    expect(m.lines).toContain("acme_pool_size 3");
    expect(m.lines).toContain("acme_pool_requests_total 2"); // counted on across the reload

    expect(await reload([])).toMatchObject({ ok: true });
    m = await scrape();
    expect(m.status).toBe(200); // the torn-down pool's collect no longer runs
    expect(m.lines.filter((l) => l.includes("acme_pool"))).toEqual([]);
    expect(m.lines.some((l) => l.startsWith("gateway_requests_total{"))).toBe(true);
  });

  it("a collect that throws costs only its own metric, logged naming the plugin", async () => {
    expect(await reload(["flaky"])).toMatchObject({ ok: true });
    const m = await scrape();
    expect(m.status).toBe(200);
    expect(m.lines.some((l) => l.startsWith("gateway_requests_total{"))).toBe(true);
    expect(m.lines.filter((l) => l.startsWith("acme_flaky_depth"))).toEqual([]);
    const warned = log.records().filter((r) => r.plugin === "flaky" && r.metric === "acme_flaky_depth");
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ msg: "plugin flaky metric acme_flaky_depth could not be collected; it is left out of this scrape", error: "Error: queue gone" });
    await scrape(); // still failing the same way: not logged again at every scrape
    expect(log.records().filter((r) => r.plugin === "flaky" && r.metric === "acme_flaky_depth")).toHaveLength(1);
  });

  it("never is the gateway's own metric: a setup that asks for one is refused, naming it", async () => {
    const r = await reload(["clash"]);
    expect(r.ok).toBe(false);
    expect((r as { problems: string[] }).problems.join("\n")).toContain(
      "plugin clash setup failed: metric gateway_connections_dropped_total: the gateway_ prefix is the gateway's own: a plugin's metric needs a name of its own",
    );
    expect((await scrape()).lines.filter((l) => l.startsWith("gateway_connections_dropped_total "))).toEqual(["gateway_connections_dropped_total 0"]);
  });

  it("is refused by its gateway_ prefix even before the gateway registers that name (on first use), naming the plugin", async () => {
    const r = await reload(["lazy"]);
    expect(r.ok).toBe(false);
    expect((r as { problems: string[] }).problems.join("\n")).toContain(
      "plugin lazy setup failed: metric gateway_cache_requests_total: the gateway_ prefix is the gateway's own",
    );
  });

  it("a refused reload that keeps the plugin leaves the serving config's gauge on /metrics", async () => {
    expect(await reload(["pool"])).toMatchObject({ ok: true });
    expect((await scrape()).lines).toContain("acme_pool_size 3");
    // The refused config's pool setup ran (its own collect) and was torn down; the serving pool is still open.
    expect(await reload(["pool", "bad"])).toMatchObject({ ok: false });
    const m = await scrape();
    expect(m.status).toBe(200);
    expect(m.lines).toContain("acme_pool_size 3");
    expect(log.records().filter((r) => r.metric === "acme_pool_size")).toEqual([]);
  });
});
