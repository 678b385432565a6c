// At shutdown a plugin's metrics stay for the final scrape the gateway waits for: before, close() unregistered them
// with the config, so a counter-only plugin's last counts (the drain's) never reached Prometheus. Its gauge's collect
// no longer runs once the teardown closes what it reads; the last value is kept.
import { afterAll, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway } from "./helpers/log-capture.ts";

const KEY = testKey("metricshut");
const dir = mkdtempSync(join(tmpdir(), "mg-plugin-metric-shut-"));
writeFileSync(join(dir, "cnt.mjs"), `export default {
  name: "cnt",
  setup(gateway) {
    const state = { n: 4, closed: false, seen: gateway.metrics.counter({ name: "acme_cnt_total", help: "h" }) };
    gateway.metrics.gauge({ name: "acme_cnt_pool", help: "h", collect() { if (state.closed) throw new Error("pool closed"); this.set(state.n); } });
    return state;
  },
  teardown(state) { state.closed = true; },
  async handle(ctx, next, { state }) { state.seen.inc(); await next(); },
};
`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("the final scrape after close() still has a plugin's counter and its gauge's last value", async () => {
  const { gw, baseURL, log } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { sim: { protocol: "sim" } },
    models: { "sim/echo": { endpoints: [{ provider: "sim", model: "echo" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
    plugins: { cnt: { module: join(dir, "cnt.mjs") } },
    pipeline: ["auth", "cnt", "router"],
  }, {}, "info");
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: "sim/echo", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(200);
  }
  expect((await gw.gateway.metrics.registry.metrics()).split("\n")).toContain("acme_cnt_pool 4");
  await gw.close();
  // What the metrics listener answers while the gateway waits for one more scrape.
  const lines = (await gw.gateway.metrics.registry.metrics()).split("\n");
  expect(lines).toContain("acme_cnt_total 3");
  expect(lines).toContain("acme_cnt_pool 4");
  expect(log.records().filter((r) => r.metric === "acme_cnt_pool")).toEqual([]);
});
