// Reload on file change and on SIGHUP: validated, swapped atomically, invalid files refused, in-flight
// requests finish on the config they started with.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyEntry, postJson, startTestGateway, testKey, writeTestConfig, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("reload", true);
const base = (models: Record<string, unknown>, tps = 1000) => ({
  providers: { slow: { protocol: "sim", sim: { tokens_per_second: tps } } },
  models,
  projects: { p: { keys: [keyEntry("k", KEY)] } },
});
const model = (provider = "sim") => ({ endpoints: [{ provider, model: "m" }] });
let gw: TestGateway;

const chat = (m: string, extra: Record<string, unknown> = {}) =>
  postJson(`${gw.baseURL}/chat/completions`, { model: m, messages: [{ role: "user", content: "Hello reload" }], ...extra }, { authorization: `Bearer ${KEY}` });

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

beforeAll(async () => {
  gw = await startTestGateway(base({ "a/one": model() }), { watch: true });
});
afterAll(async () => {
  await gw?.close();
});

describe("config reload", () => {
  it("picks up a valid change to the file", async () => {
    expect((await chat("a/two")).status).toBe(404);
    writeTestConfig(gw, base({ "a/one": model(), "a/two": model() }));
    await until(async () => (await chat("a/two")).status === 200);
  });

  it("refuses an invalid file and keeps serving the old config", async () => {
    writeFileSync(gw.configFile, "models:\n  a/one: { endpoints: [{ provider: nowhere, model: m }] }\n");
    await until(async () => gw.gateway.lastReload?.ok === false);
    expect((await chat("a/one")).status).toBe(200);
    expect((await chat("a/two")).status).toBe(200);
  });

  it("refuses a config whose plugin setup throws, keeps serving, and the process lives on", async () => {
    // The plugin throws in setup only after the first load: the reload is what fails, not the boot.
    const dir = mkdtempSync(join(tmpdir(), "mg-reload-setup-"));
    const plugin = join(dir, "flaky-setup.mjs");
    writeFileSync(plugin, `let loads = 0;
export default { name: "flaky-setup", setup() { if (++loads > 1) throw new Error("setup exploded"); }, handle: (ctx, next) => next() };
`);
    const withPlugin = (models: Record<string, unknown>) => ({
      ...base(models), plugins: { "flaky-setup": { module: plugin } }, pipeline: ["auth", "flaky-setup", "router"],
    });
    const other = await startTestGateway(withPlugin({ "a/one": model() }), { watch: true });
    try {
      const ask = (m: string) => postJson(`${other.baseURL}/chat/completions`, { model: m, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
      expect((await ask("a/one")).status).toBe(200);
      writeTestConfig(other, withPlugin({ "a/one": model(), "a/four": model() }));
      await until(async () => other.gateway.lastReload?.ok === false);
      expect(other.gateway.lastReload!.problems).toEqual([expect.stringContaining("setup exploded")]);
      expect((await ask("a/one")).status).toBe(200);
      expect((await ask("a/four")).status).toBe(404);
    } finally {
      await other.close();
    }
  });

  it("reloads on SIGHUP", async () => {
    // A second gateway that does not watch its file: only the signal can apply the change.
    const other = await startTestGateway(base({ "a/one": model() }), { sighup: true });
    try {
      writeTestConfig(other, base({ "a/three": model() }));
      const ask = (m: string) => postJson(`${other.baseURL}/chat/completions`, { model: m, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
      await new Promise((r) => setTimeout(r, 300));
      expect((await ask("a/three")).status).toBe(404);
      process.kill(process.pid, "SIGHUP");
      await until(async () => (await ask("a/three")).status === 200);
      expect((await ask("a/one")).status).toBe(404);
    } finally {
      await other.close();
    }
  });

  it("names the settings a reload cannot apply (read only at start) and applies the rest; reverting them clears it", async () => {
    const other = await startTestGateway(base({ "a/one": model() }));
    const pending = async () => (await other.gateway.metrics.registry.getSingleMetric("gateway_config_restart_pending")!.get()).values[0]!.value;
    try {
      expect(other.gateway.restartPending).toEqual([]);
      writeTestConfig(other, { ...base({ "a/one": model(), "a/two": model() }), server: { port: 1, headers_timeout_ms: 7000 }, log: { level: "warn" }, store: { kind: "sqlite", path: "x.db", fsync: false } });
      expect(await other.gateway.reload()).toMatchObject({ ok: true });
      expect(other.gateway.restartPending).toEqual(["server.port", "server.headers_timeout_ms", "store.kind", "store.path", "store.fsync", "log"]);
      expect(await pending()).toBe(1);
      // Everything else is in force, on the listener it started with.
      const two = await postJson(`${other.baseURL}/chat/completions`, { model: "a/two", messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
      expect(two.status).toBe(200);

      writeTestConfig(other, base({ "a/one": model(), "a/two": model() }));
      expect(await other.gateway.reload()).toMatchObject({ ok: true });
      expect(other.gateway.restartPending).toEqual([]);
      expect(await pending()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("two reloads at once (a SIGHUP during the watcher's): the later file wins and does not wait for the slower one", async () => {
    // A plugin whose setup waits while the test holds it: the first reload is still setting up when the second starts.
    // It says when a setup has taken the hold, so the test goes on once the first is in it (a fixed pause let a loaded
    // machine start the second reload first).
    const dir = mkdtempSync(join(tmpdir(), "mg-reload-order-"));
    const plugin = join(dir, "held-setup.mjs");
    writeFileSync(plugin, `export default { name: "held-setup", async setup() { const held = globalThis.__mgHeldSetup; globalThis.__mgInSetup?.(); await held; }, handle: (ctx, next) => next() };\n`);
    const withPlugin = (models: Record<string, unknown>) => ({ ...base(models), plugins: { "held-setup": { module: plugin } }, pipeline: ["auth", "held-setup", "router"] });
    const other = await startTestGateway(withPlugin({ "a/one": model() }));
    const g = globalThis as { __mgHeldSetup?: Promise<void>; __mgInSetup?: () => void };
    let release!: () => void;
    g.__mgHeldSetup = new Promise<void>((r) => (release = r));
    const firstInSetup = new Promise<void>((r) => (g.__mgInSetup = r));
    const ask = (m: string) => postJson(`${other.baseURL}/chat/completions`, { model: m, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` });
    try {
      writeTestConfig(other, withPlugin({ "a/one": model(), "a/two": model() }));
      const first = other.gateway.reload(undefined, "file");
      await firstInSetup; // the first has read its file and waits in setup
      delete g.__mgHeldSetup; // the second's setup does not wait
      writeTestConfig(other, withPlugin({ "a/one": model(), "a/three": model() }));
      // The second is in force while the first is still held: it did not wait for it.
      expect(await other.gateway.reload(undefined, "sighup")).toMatchObject({ ok: true });
      expect((await ask("a/three")).status).toBe(200);
      release();
      // The first ends after it: dropped, not installed over the later file.
      expect(await first).toEqual({ ok: false, problems: ["superseded by a later reload"] });
      expect((await ask("a/three")).status).toBe(200);
      expect((await ask("a/two")).status).toBe(404);
      expect(other.gateway.lastReload).toMatchObject({ ok: true, trigger: "sighup" });
    } finally {
      delete g.__mgHeldSetup;
      delete g.__mgInSetup;
      release();
      await other.close();
    }
  });

  it("lets a request in flight finish on the config it started with", async () => {
    writeTestConfig(gw, base({ "a/slow": model("slow") }, 40));
    await until(async () => (await chat("a/slow", { max_tokens: 1 })).status === 200);
    const started = fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "a/slow", stream: true, max_tokens: 20, messages: [{ role: "user", content: "Hello reload" }] }),
    });
    const res = await started;
    expect(res.status).toBe(200);
    // While the stream is running, the model disappears from the config.
    writeTestConfig(gw, base({ "a/other": model() }));
    await until(async () => (await chat("a/slow")).status === 404);
    const text = await res.text();
    expect(text.trim().endsWith("data: [DONE]")).toBe(true);
    expect(text).toContain('"finish_reason":"length"');
  });
});
