// A plugin that registers a Prometheus metric in setup (as the published types tell it to) no longer makes every
// later reload fail: gateway.metrics.counter() returns the counter an earlier setup registered, whose counts go on.
// Before: the second setup's `new Counter(...)` threw "already been registered" and each reload was refused until a
// restart; one that still does so is now told what to use instead.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import YAML from "yaml";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway } from "./helpers/log-capture.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("metric");
const dir = mkdtempSync(join(tmpdir(), "mg-plugin-metric-"));
writeFileSync(join(dir, "counter.mjs"), `export default {
  name: "counter",
  setup(gateway, options) {
    const requests = gateway.metrics.counter({ name: "acme_plugin_requests_total", help: "Requests the plugin saw.", labelNames: ["tenant"] });
    return { requests, label: options.label };
  },
  async handle(ctx, next, { state }) { state.requests.inc({ tenant: state.label }); await next(); },
};
`);
// The way that fails at a reload: a counter of its own, registered anew by each setup.
const PROM_CLIENT = pathToFileURL(createRequire(import.meta.url).resolve("prom-client")).href; // the gateway's own copy
writeFileSync(join(dir, "raw.mjs"), `import { Counter } from ${JSON.stringify(PROM_CLIENT)};
export default {
  name: "raw",
  setup(gateway) { return new Counter({ name: "acme_raw_total", help: "h", registers: [gateway.metrics.registry] }); },
  handle: (ctx, next) => next(),
};
`);
const config = (label: string, raw = false) => ({
  store: { kind: "memory" },
  providers: { sim: { protocol: "sim" } },
  models: { "sim/echo": { endpoints: [{ provider: "sim", model: "echo" }] } },
  projects: { p: { keys: [keyEntry("k", KEY)] } },
  plugins: { counter: { module: join(dir, "counter.mjs"), options: { label } }, ...(raw ? { raw: { module: join(dir, "raw.mjs") } } : {}) },
  pipeline: ["auth", "counter", ...(raw ? ["raw"] : []), "router"],
});

let gw: RunningGateway, baseURL: string;
beforeAll(async () => {
  ({ gw, baseURL } = await startLoggedGateway(config("a"), {}, "silent"));
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
const reload = (c: object) => {
  writeFileSync(gw.gateway.config.file, YAML.stringify(c));
  return gw.gateway.reload(gw.gateway.config.file);
};
const series = async () => (await (await fetch(gw.metricsUrl!)).text()).split("\n").filter((l) => l.startsWith("acme_plugin_requests_total{"));

describe("a plugin metric registered in setup", () => {
  it("survives reloads: each reload is applied and the counter goes on counting", async () => {
    expect((await chat()).status).toBe(200);
    for (const label of ["b", "c"]) {
      const r = await reload(config(label));
      expect(r).toMatchObject({ ok: true });
      expect((await chat()).status).toBe(200);
    }
    expect(await series()).toEqual(['acme_plugin_requests_total{tenant="a"} 1', 'acme_plugin_requests_total{tenant="b"} 1', 'acme_plugin_requests_total{tenant="c"} 1']);
  });

  it("another kind or other labels under the same name is refused, naming both", () => {
    expect(() => gw.gateway.metrics.gauge({ name: "acme_plugin_requests_total", help: "h", labelNames: ["tenant"] }))
      .toThrow("metric acme_plugin_requests_total is already registered as a counter with labels [tenant], not as a gauge with labels [tenant]");
    expect(() => gw.gateway.metrics.counter({ name: "acme_plugin_requests_total", help: "h", labelNames: ["team"] }))
      .toThrow("not as a counter with labels [team]");
  });

  it("a setup that registers with new Counter(): the refused reload says what to use", async () => {
    expect(await reload(config("d", true))).toMatchObject({ ok: true }); // the first registration
    const again = await reload(config("e", true));
    expect(again.ok).toBe(false);
    expect((again as { problems: string[] }).problems[0]).toContain(
      "plugin raw setup failed: A metric with the name acme_raw_total has already been registered. (setup runs again at every reload: get acme_raw_total with gateway.metrics.counter(), .gauge() or .histogram(), which return the one an earlier setup registered)",
    );
  });
});
