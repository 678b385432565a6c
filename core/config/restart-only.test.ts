// A worker that replaces one that died loads the config the others serve (their accepted texts), with the settings
// read only at start as the gateway started: one gateway on one store and one port, whatever the file says now.
import { describe, expect, it } from "vitest";
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "./load.ts";
import { restartPending } from "./restart-only.ts";
import { changeFields, diffConfigs } from "./diff.ts";
import { write } from "./config.testkit.ts";

const started = (extra = "") => `
server: { port: 18001, upstream_timeout_ms: 5000 }
store: { kind: redis, url: "redis://127.0.0.1:6379", prefix: "mg:", timeout_ms: 300 }
log: { level: info }
metrics: { port: 19001 }
include: [models.yaml]
projects:
  demo: { keys: [], budget: { usd: "5" } }
${extra}`;

const edited = `
server: { port: 18002, upstream_timeout_ms: 9000 }
store: { kind: redis, url: "redis://127.0.0.1:6379/1", prefix: "mg:", timeout_ms: 500 }
log: { level: debug, access: false }
include: [models.yaml]
projects:
  demo: { keys: [], budget: { usd: "0.0005" } }
`;

describe("loading a running gateway's config for a worker that joins it", () => {
  it("takes the settings read only at start from the start's texts, everything else from the accepted texts", async () => {
    const file = write(started());
    writeFileSync(join(dirname(file), "models.yaml"), "models:\n  acme/one: { endpoints: [{ provider: sim, model: one }] }\n");
    const start = await loadConfig(file);
    const startTexts = start.texts!;
    expect(Object.keys(startTexts)).toEqual([file, join(dirname(file), "models.yaml")]);

    writeFileSync(file, edited);
    const accepted = await loadConfig(file);
    const joined = await loadConfig(file, { texts: accepted.texts, startedWith: startTexts });
    // The store, the port, the log and the metrics listener as the gateway started: not a second store or port.
    expect(joined.store).toEqual({ kind: "redis", url: "redis://127.0.0.1:6379", prefix: "mg:", timeout_ms: 500 });
    expect(joined.server.port).toBe(18001);
    expect(joined.raw.log).toEqual({ level: "info" });
    expect(joined.metrics.port).toBe(19001);
    // What a reload applies comes from the accepted config: the budget, the upstream timeout, store.timeout_ms.
    expect(joined.projects.get("demo")!.config.budget).toEqual({ usd: "0.0005" });
    expect(joined.server.upstreamTimeoutMs).toBe(9000);
    expect(joined.models.has("acme/one")).toBe(true);
    // So it reports the same settings waiting for a restart as a worker that started then and reloaded.
    expect(restartPending(joined, accepted)).toEqual(restartPending(start, accepted));
    expect(restartPending(start, accepted)).toEqual(["server.port", "store.url", "log", "metrics.port"]);
  });

  it("its first reload says what changed as the others' does: not the settings it holds as the gateway started", async () => {
    const file = write(started());
    writeFileSync(join(dirname(file), "models.yaml"), "models:\n  acme/one: { endpoints: [{ provider: sim, model: one }] }\n");
    const start = await loadConfig(file);
    writeFileSync(file, edited);
    const accepted = await loadConfig(file); // what the other workers serve
    const joined = await loadConfig(file, { texts: accepted.texts, startedWith: start.texts });
    const next = await loadConfig(file); // the file reloaded, unchanged
    expect(changeFields(diffConfigs(accepted, next))).toEqual({});
    expect(changeFields(diffConfigs(joined, next))).toEqual({});
    writeFileSync(file, edited.replace("upstream_timeout_ms: 9000", "upstream_timeout_ms: 7000").replace("/1", "/2"));
    const changed = await loadConfig(file);
    expect(changeFields(diffConfigs(joined, changed))).toEqual(changeFields(diffConfigs(accepted, changed)));
    expect(changeFields(diffConfigs(joined, changed))).toEqual({ settings: ["server", "store"] });
  });

  it("reads the texts it is given, not the disk: a file broken or gone since is not what it loads", async () => {
    const file = write(started());
    writeFileSync(join(dirname(file), "models.yaml"), "models:\n  acme/one: { endpoints: [{ provider: sim, model: one }] }\n");
    const start = await loadConfig(file);
    writeFileSync(file, started().replace("budget:", "budjet:"));
    unlinkSync(join(dirname(file), "models.yaml"));
    await expect(loadConfig(file)).rejects.toThrow(/budjet/);
    const joined = await loadConfig(file, { texts: start.texts, startedWith: start.texts });
    expect(joined.projects.get("demo")!.config.budget).toEqual({ usd: "5" });
    expect(joined.models.has("acme/one")).toBe(true);
    expect(joined.texts).toEqual(start.texts);
    expect(readFileSync(file, "utf8")).toContain("budjet"); // nothing written
  });

  it("a setting the start left out is left out (its default), and a store the start had none of is the default SQLite file", async () => {
    const file = write("projects:\n  demo: { keys: [] }\n");
    const start = await loadConfig(file);
    writeFileSync(file, `server: { port: 18003 }\nstore: { kind: redis, url: "redis://127.0.0.1:6379", timeout_ms: 400 }\nprojects:\n  demo: { keys: [] }\n`);
    const accepted = await loadConfig(file);
    const joined = await loadConfig(file, { texts: accepted.texts, startedWith: start.texts });
    expect(joined.server.port).toBe(8787);
    expect(joined.store).toEqual({ kind: "sqlite" });
  });
});

describe("the store's files, as restartPending compares them", () => {
  it("the documented default written out (store: { kind: sqlite, path: ./data/gateway.db }) over none is no restart", async () => {
    const file = write("projects:\n  demo: { keys: [] }\n");
    const start = await loadConfig(file);
    writeFileSync(file, "store: { kind: sqlite, path: ./data/gateway.db, spool_dir: ./data/spool }\nprojects:\n  demo: { keys: [] }\n");
    expect(restartPending(start, await loadConfig(file))).toEqual([]);
    // The same file named absolutely, too; another file is a restart.
    writeFileSync(file, `store: { kind: sqlite, path: ${join(dirname(file), "data/gateway.db")} }\nprojects:\n  demo: { keys: [] }\n`);
    expect(restartPending(start, await loadConfig(file))).toEqual([]);
    writeFileSync(file, "store: { kind: sqlite, path: ./data/other.db }\nprojects:\n  demo: { keys: [] }\n");
    expect(restartPending(start, await loadConfig(file))).toEqual(["store.path"]);
  });
});
