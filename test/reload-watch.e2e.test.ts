// The config watch survives the ways files are really written: `sed -i` (a new file renamed over the old one),
// `cp && mv`, a rename away and back, delete-then-recreate, an included file's edit, and a Kubernetes ConfigMap's
// `..data` symlink swap. Each reload is counted in gateway_config_reloads_total{result}, logs what it changed, and a
// refused one's reason is kept (gateway.lastReload) and shown by gateway_config_last_reload_success.
import { afterEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { startGateway, type RunningGateway } from "../core/server.ts";
import { captureLogger, type CapturedLog } from "./helpers/log-capture.ts";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";

const KEY = testKey("watch", true);
const NEW_KEY = testKey("watchnew", true);
const model = { endpoints: [{ provider: "sim", model: "m" }] };
const config = (models: string[], extra: Record<string, unknown> = {}) => ({
  models: Object.fromEntries(models.map((m) => [m, model])),
  projects: { p: { keys: [keyEntry("k", KEY)] } },
  ...extra,
});

let running: RunningGateway | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(configFile: string): Promise<{ gw: RunningGateway; log: CapturedLog }> {
  const { logger, log } = captureLogger("info");
  running = await startGateway({ configFile, port: 0, host: "127.0.0.1", logger, watch: true });
  return { gw: running, log };
}

function dirWith(text: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "mg-watch-"));
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, text);
  return { dir, file };
}

const served = async (gw: RunningGateway, m: string, key = KEY) =>
  (await postJson(`${gw.url}/api/v1/chat/completions`, { model: m, messages: [{ role: "user", content: "hi" }], max_tokens: 1 }, { authorization: `Bearer ${key}` })).status === 200;

async function reloads(gw: RunningGateway, result: "ok" | "failed"): Promise<number> {
  const m = await gw.gateway.metrics.registry.getSingleMetric("gateway_config_reloads_total")!.get();
  return m.values.find((v) => v.labels.result === result)?.value ?? 0;
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) if (await check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

/** Wait for the next successful reload, then check the model it brought is served. */
async function reloadedTo(gw: RunningGateway, before: number, m: string): Promise<void> {
  await until(`reload ${before + 1}`, async () => (await reloads(gw, "ok")) > before);
  expect(await served(gw, m)).toBe(true);
}

const sed = (expr: string, file: string) => execFileSync("sed", ["-i", expr, file]);

describe("config watch", () => {
  it("reloads a config edited five times by sed -i five times, each time with what changed in the log", async () => {
    const { file } = dirWith(YAML.stringify(config(["a/m0"])));
    const { gw, log } = await start(file);
    for (let i = 1; i <= 5; i++) {
      const before = await reloads(gw, "ok");
      sed(`s#a/m${i - 1}:#a/m${i}:#`, file);
      await reloadedTo(gw, before, `a/m${i}`);
      expect(await served(gw, `a/m${i - 1}`)).toBe(false);
    }
    expect(await reloads(gw, "ok")).toBe(5);
    expect(await reloads(gw, "failed")).toBe(0);
    const lines = log.records().filter((r) => r.msg === "config reloaded");
    expect(lines).toHaveLength(5);
    expect(lines[4]).toMatchObject({ trigger: "file", file, changes: { models: { added: ["a/m5"], removed: ["a/m4"] } } });
    expect(gw.gateway.lastReload).toMatchObject({ ok: true, trigger: "file" });
  });

  it("follows cp && mv, a rename away and back, and delete-then-recreate", async () => {
    const { dir, file } = dirWith(YAML.stringify(config(["a/one"])));
    const { gw, log } = await start(file);

    let before = await reloads(gw, "ok");
    writeFileSync(join(dir, "next.yaml"), YAML.stringify(config(["a/two"])));
    execFileSync("sh", ["-c", `cp next.yaml staged.yaml && mv staged.yaml gateway.yaml`], { cwd: dir });
    await reloadedTo(gw, before, "a/two");

    // Away: the last config keeps serving, and the watch says the file is gone. Back unchanged: nothing to reload.
    renameSync(file, join(dir, "gateway.yaml.bak"));
    await until("the gone warning", () => log.records().some((r) => r.msg.startsWith("config file gone")));
    expect(await served(gw, "a/two")).toBe(true);
    renameSync(join(dir, "gateway.yaml.bak"), file);
    await new Promise((r) => setTimeout(r, 400));
    expect(await reloads(gw, "ok")).toBe(before + 1);
    expect(await reloads(gw, "failed")).toBe(0);
    // ... and later edits are still seen.
    before = await reloads(gw, "ok");
    sed("s#a/two:#a/three:#", file);
    await reloadedTo(gw, before, "a/three");

    before = await reloads(gw, "ok");
    unlinkSync(file);
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(file, YAML.stringify(config(["a/four"])));
    await reloadedTo(gw, before, "a/four");
    expect(await reloads(gw, "failed")).toBe(0);
  });

  it("follows a Kubernetes ConfigMap volume: gateway.yaml -> ..data/gateway.yaml, ..data swapped atomically", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-watch-k8s-"));
    let generation = 0;
    // What the kubelet does: a new timestamped directory, a ..data_tmp symlink to it renamed over ..data, the old
    // directory removed.
    const publish = (text: string) => {
      const gen = `..2026_11_26_00_00_0${generation++}.${process.pid}`;
      mkdirSync(join(dir, gen));
      writeFileSync(join(dir, gen, "gateway.yaml"), text);
      symlinkSync(gen, join(dir, "..data_tmp"));
      renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
      if (generation > 1) rmSync(join(dir, `..2026_11_26_00_00_0${generation - 2}.${process.pid}`), { recursive: true });
    };
    publish(YAML.stringify(config(["k/v0"])));
    symlinkSync("..data/gateway.yaml", join(dir, "gateway.yaml"));
    const { gw } = await start(join(dir, "gateway.yaml"));
    for (let i = 1; i <= 3; i++) {
      const before = await reloads(gw, "ok");
      publish(YAML.stringify(config([`k/v${i}`])));
      await reloadedTo(gw, before, `k/v${i}`);
    }
  });

  it("reloads when an included file is replaced, and follows an include added by a reload", async () => {
    const { dir, file } = dirWith(YAML.stringify(config([], { include: ["catalog/one.yaml"] })));
    mkdirSync(join(dir, "catalog"));
    const catalog = (m: string) => YAML.stringify({ models: { [m]: model } });
    writeFileSync(join(dir, "catalog", "one.yaml"), catalog("c/one"));
    writeFileSync(join(dir, "catalog", "two.yaml"), catalog("c/two"));
    const { gw } = await start(file);
    expect(await served(gw, "c/one")).toBe(true);
    let before = await reloads(gw, "ok");
    sed("s#c/one:#c/uno:#", join(dir, "catalog", "one.yaml"));
    await reloadedTo(gw, before, "c/uno");
    before = await reloads(gw, "ok");
    writeFileSync(file, YAML.stringify(config([], { include: ["catalog/one.yaml", "catalog/two.yaml"] })));
    await reloadedTo(gw, before, "c/two");
    before = await reloads(gw, "ok");
    sed("s#c/two:#c/dos:#", join(dir, "catalog", "two.yaml"));
    await reloadedTo(gw, before, "c/dos");
  });

  it("after a reload refused for a newly added include (missing, or broken), creating or fixing that file reloads", async () => {
    const { dir, file } = dirWith(YAML.stringify(config(["a/one"])));
    mkdirSync(join(dir, "catalog"));
    const catalog = (m: string) => YAML.stringify({ models: { [m]: model } });
    const { gw } = await start(file);
    writeFileSync(file, YAML.stringify(config(["a/one"], { include: ["catalog/new.yaml"] })));
    await until("the refused reload", async () => (await reloads(gw, "failed")) === 1);
    expect(gw.gateway.lastReload!.problems).toEqual([expect.stringContaining("catalog/new.yaml")]);
    writeFileSync(join(dir, "catalog", "new.yaml"), catalog("c/new"));
    await reloadedTo(gw, 0, "c/new");

    writeFileSync(join(dir, "catalog", "broken.yaml"), "models: [\n");
    writeFileSync(file, YAML.stringify(config(["a/one"], { include: ["catalog/new.yaml", "catalog/broken.yaml"] })));
    await until("the second refused reload", async () => (await reloads(gw, "failed")) === 2);
    writeFileSync(join(dir, "catalog", "broken.yaml"), catalog("c/fixed"));
    await reloadedTo(gw, 1, "c/fixed");

    // An include that was never served is not waited for while it is missing: taking it out of gateway.yaml reloads.
    writeFileSync(file, YAML.stringify(config(["a/one"], { include: ["catalog/new.yaml", "catalog/typo.yaml"] })));
    await until("the third refused reload", async () => (await reloads(gw, "failed")) === 3);
    writeFileSync(file, YAML.stringify(config(["a/two"], { include: ["catalog/new.yaml"] })));
    await reloadedTo(gw, 2, "a/two");
  });

  it("a file written in place slowly, or with a pause mid-way, is reloaded once, whole: no key is dropped meanwhile", async () => {
    const OTHER = testKey("watchother", true);
    const two = (models: string[]) => {
      const c = config(models) as any;
      c.projects.q = { keys: [keyEntry("k", OTHER)] };
      return YAML.stringify(c);
    };
    const { file } = dirWith(two(["a/one"]));
    const { gw, log } = await start(file);
    const inPlace = async (text: string, pause: (line: number) => number) => {
      const fd = openSync(file, "w");
      const lines = text.split(/(?<=\n)/);
      for (let i = 0; i < lines.length; i++) {
        writeSync(fd, lines[i]!);
        await new Promise((r) => setTimeout(r, pause(i)));
      }
      closeSync(fd);
    };
    const settledOn = async (m: string) => {
      await until(`the reload to ${m}`, () => served(gw, m), 15_000);
      expect(await served(gw, m, OTHER)).toBe(true);
    };
    // A generator writing a line at a time over about a second and a half, past the watch's first look.
    const slow = two(["a/two", "a/three"]);
    await inPlace(slow, () => 1500 / slow.split("\n").length);
    await settledOn("a/three");
    // A writer that stops for a second half-way (before the second project's key).
    const paused = two(["a/four"]);
    const half = Math.floor(paused.split("\n").length / 2);
    await inPlace(paused, (i) => (i === half ? 1000 : 0));
    await settledOn("a/four");
    expect(await reloads(gw, "failed")).toBe(0);
    expect(await reloads(gw, "ok")).toBe(2);
    expect(log.records().filter((r) => r.msg === "config reloaded").map((r) => r.changes.keys ?? {})).toEqual([{}, {}]);
  });

  it("a config file that is there but cannot be read is a refused reload, not a file gone", async () => {
    const { file } = dirWith(YAML.stringify(config(["a/one"])));
    const { gw, log } = await start(file);
    const success = async () => (await gw.gateway.metrics.registry.getSingleMetric("gateway_config_last_reload_success")!.get()).values[0]!.value;
    // chmod 000 does not stop root, so as root the name is given to a directory: another way to be there, unreadable.
    const root = process.getuid?.() === 0;
    if (root) {
      unlinkSync(file);
      mkdirSync(file);
    } else chmodSync(file, 0o000);
    await until("the failed reload", async () => (await reloads(gw, "failed")) === 1);
    expect(await success()).toBe(0);
    expect(gw.gateway.lastReload).toMatchObject({ ok: false, trigger: "file", problems: [expect.stringMatching(/gateway\.yaml:1:1: cannot read config file: (EISDIR|EACCES)/)] });
    expect(log.records().some((r) => r.msg.startsWith("config file gone"))).toBe(false);
    expect(await served(gw, "a/one")).toBe(true); // still the previous config
    if (root) rmSync(file, { recursive: true });
    else chmodSync(file, 0o644);
    writeFileSync(file, YAML.stringify(config(["a/two"])));
    await reloadedTo(gw, 0, "a/two");
    expect(await success()).toBe(1);
  });

  it("a refused reload is counted, keeps its reason, and flips gateway_config_last_reload_success until a good one", async () => {
    const { file } = dirWith(YAML.stringify(config(["a/one"])));
    const { gw, log } = await start(file);
    const success = async () => (await gw.gateway.metrics.registry.getSingleMetric("gateway_config_last_reload_success")!.get()).values[0]!.value;
    expect(await success()).toBe(1);
    writeFileSync(file, "models:\n  a/one: { endpoints: [{ provider: nowhere, model: m }] }\n");
    await until("the failed reload", async () => (await reloads(gw, "failed")) === 1);
    expect(await success()).toBe(0);
    expect(gw.gateway.lastReload).toMatchObject({ ok: false, trigger: "file", problems: [expect.stringMatching(/gateway\.yaml:2:\d+: .*unknown provider "nowhere"/)] });
    expect(log.records().find((r) => r.msg.startsWith("config reload refused"))).toMatchObject({ trigger: "file", problems: gw.gateway.lastReload!.problems });
    expect(await served(gw, "a/one")).toBe(true); // still the previous config

    // A key and a provider added, a project's limits changed: each named in the reload's log line, never a hash.
    const next = config(["a/one"], { providers: { slow: { protocol: "sim", sim: { tokens_per_second: 5 } } } }) as any;
    next.projects.p.keys.push(keyEntry("k2", NEW_KEY));
    next.projects.p.rate_limits = { rpm: 1000 };
    writeFileSync(file, YAML.stringify(next));
    await until("the good reload", async () => (await reloads(gw, "ok")) === 1);
    expect(await success()).toBe(1);
    expect(await served(gw, "a/one", NEW_KEY)).toBe(true);
    const line = log.records().find((r) => r.msg === "config reloaded")!;
    expect(line.changes).toEqual({ providers: { added: ["slow"] }, projects: { changed: ["p"] }, keys: { added: ["p/k2"] } });
    expect(JSON.stringify(line)).not.toContain(next.projects.p.keys[1].sha256);
  });
});
