// `start --workers 2` watching its gateway.yaml, on a real redis-server: a worker that dies (kill -9, as an OOM kill)
// is replaced by one that joins the running gateway. An edit of a setting read only at start (store.prefix here)
// waits for a restart in the new worker as in the others: its spend and ledger go to the same store, so a budget
// holds. An edit the workers refused does not stop the replacement from starting: it serves what the others serve
// and logs the same refusal. Every worker's line names the worker and its pid.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { ulid } from "ulid";
import { Redis } from "ioredis";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { freePort } from "./helpers/ports.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { builtins } from "../core/builtins.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ADMIN = "mg_admin_read_key_for_replacement_01";

interface Reply { status: number; worker: string | undefined; text: string }

/** One request on its own connection, so the cluster may hand it to either worker. */
function send(port: number, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request({
      host: "127.0.0.1", port, path, method: data ? "POST" : "GET", agent: false,
      headers: { connection: "close", ...(data ? { "content-type": "application/json" } : {}), ...headers },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, worker: res.headers["x-mg-worker"] as string | undefined, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${path} in 10 s`))); // a connection handed to a dying worker
    req.end(data);
  });
}

async function until<T>(what: string, f: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The JSON log lines (workers' and primary's) on the cluster's stderr with this msg. */
const linesOf = (err: string, msg: string | RegExp) => err.split("\n").filter((l) => l.startsWith("{") && l.endsWith("}")).map((l) => JSON.parse(l))
  .filter((l) => (typeof msg === "string" ? l.msg === msg : msg.test(l.msg)));


describe("start --workers 2: a worker started in place of one that died joins the running gateway", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let proc: ChildProcess;
  let port: number;
  let err = "";
  let file: string;
  let config: any;
  /** The text of the last edit the workers accepted, and the plugin's files: `hold` makes a worker's start wait. */
  let accepted: string;
  let hold: string, imports: string;
  const prefix = `mgr-${ulid()}:`;
  const editedPrefix = `mgr-edited-${ulid()}:`;
  /** The workers' pids as the banner lists them, and worker id -> pid once their lines have named them. */
  let started: number[];
  const pids = new Map<number, number>();

  /** Requests until worker `id` answers one; its answer. */
  const fromWorker = (id: number, path: string, body?: unknown, headers?: Record<string, string>) =>
    until(`worker ${id} to answer ${path}`, async () => {
      const r = await send(port, path, body, headers);
      return r.worker === String(id) ? r : undefined;
    });

  /** kill -9 worker `id`; the id and pid of the one the primary starts in its place, once it listens. */
  async function replace(id: number): Promise<number> {
    const before = linesOf(err, "worker listening").length;
    process.kill(pids.get(id)!, "SIGKILL");
    const line = await until("a replacement worker to listen", () => linesOf(err, "worker listening")[before]);
    pids.set(line.worker, line.pid);
    return line.worker;
  }

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI();
    const dir = mkdtempSync(join(tmpdir(), "mg-replace-"));
    file = join(dir, "gateway.yaml");
    hold = join(dir, "hold");
    imports = join(dir, "imports.log");
    // A plugin whose import waits while `hold` exists: a replacement's start held open after it read the config.
    writeFileSync(join(dir, "slow.mjs"), `import { appendFileSync, existsSync } from "node:fs";
appendFileSync(${JSON.stringify(imports)}, process.pid + "\\n");
while (existsSync(${JSON.stringify(hold)})) await new Promise((r) => setTimeout(r, 20));
export default { name: "slow", async handle(ctx, next) { await next(); } };
`);
    writeFileSync(imports, "");
    config = policyConfig(fake.baseUrl, {
      store: { kind: "redis", url: redis.url, prefix }, acme: { budget: { usd: "5", period: "total" } },
      pipeline: ["auth", "slow", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
    });
    config.plugins = { slow: { module: join(dir, "slow.mjs") } };
    config.admin_keys = [{ id: "viewer", sha256: sha256Hex(ADMIN), scope: "read" }];
    writeFileSync(file, YAML.stringify(config));
    port = await freePort();
    // Watching the file (no --no-watch): the workers reload an edit on their own, as an operator's would.
    proc = spawn(process.execPath, ["bin/model-gateway.mjs", "start", "--config", file, "--port", String(port), "--host", "127.0.0.1", "--metrics-port", "0", "--workers", "2"], {
      cwd: ROOT, stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (err += d));
    const listed = await until("the cluster to listen", () => out.match(/pids ([\d ]+)\)/)?.[1], 60_000);
    started = listed.trim().split(" ").map(Number);
  }, 90_000);

  afterAll(async () => {
    if (proc && proc.exitCode === null) {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    }
    await fake?.close();
    await redis?.stop();
  });

  it("an edited store waits for the restart in the new worker too: its spend lands in the store the others use", async () => {
    expect((await fromWorker(1, "/api/v1/chat/completions", chat(), auth())).status).toBe(200);
    config.store.prefix = editedPrefix; // read only at start
    config.models["openai/gpt-4o-new"] = { ...config.models["openai/gpt-4o"] }; // applied by a reload
    accepted = YAML.stringify(config);
    writeFileSync(file, accepted);
    const waits = await until("both workers to say the store waits for a restart", () => {
      const l = linesOf(err, /take effect only when the gateway restarts/);
      return l.length >= 2 ? l : undefined;
    });
    // Each worker's line says which worker and process wrote it.
    expect(waits.map((l) => l.settings)).toEqual([["store.prefix"], ["store.prefix"]]);
    expect(waits.map((l) => l.worker).sort()).toEqual([1, 2]);
    expect(waits.map((l) => l.pid).sort()).toEqual([...started].sort());
    for (const l of waits) pids.set(l.worker, l.pid);

    const fresh = await replace(1);
    const r = await fromWorker(fresh, "/api/v1/chat/completions", chat("openai/gpt-4o-new"), auth());
    expect(r.status, r.text).toBe(200); // the reloaded part of the config: as the others serve it
    const access = await until("the new worker's request line", () => linesOf(err, "request").find((l) => l.worker === fresh));
    expect(access.pid).toBe(pids.get(fresh));
    const view = JSON.parse((await fromWorker(fresh, "/admin/v1/config", undefined, { authorization: `Bearer ${ADMIN}` })).text);
    expect(view.config.restart_pending).toEqual(["store.prefix"]);
    const redisClient = new Redis(redis.url);
    try {
      expect(await redisClient.keys(`${editedPrefix}*`)).toEqual([]); // no second store
      expect((await redisClient.keys(`${prefix}*`)).length).toBeGreaterThan(0);
    } finally {
      redisClient.disconnect();
    }
    const budgets = JSON.parse((await fromWorker(fresh, "/admin/v1/budgets", undefined, { authorization: `Bearer ${ADMIN}` })).text);
    const other = JSON.parse((await fromWorker(2, "/admin/v1/budgets", undefined, { authorization: `Bearer ${ADMIN}` })).text);
    expect(budgets.projects).toEqual(other.projects); // one ledger: both workers see the same spend
    expect(budgets.projects[0].spent_usd).not.toBe("0");
  }, 90_000);

  it("while the file holds a refused edit, a worker that dies is replaced on the config the others serve, which logs the same refusal", async () => {
    config.projects.acme.budjet = config.projects.acme.budget;
    delete config.projects.acme.budget;
    writeFileSync(file, YAML.stringify(config));
    const live = [...pids.keys()].filter((id) => id !== 1);
    await until("both workers to refuse the edit", () => {
      const refused = linesOf(err, "config reload refused; still serving the previous config").filter((l) => live.includes(l.worker));
      return new Set(refused.map((l) => l.worker)).size === 2 ? true : undefined;
    });

    const fresh = await replace(2);
    expect(err).not.toContain("refusing to start");
    expect(linesOf(err, "worker died; starting a new one")).toHaveLength(2); // one per kill: no restart loop
    const r = await fromWorker(fresh, "/api/v1/chat/completions", chat("openai/gpt-4o-new"), auth());
    expect(r.status, r.text).toBe(200);
    const refused = await until("the new worker to log the refusal", () =>
      linesOf(err, "config reload refused; still serving the previous config").find((l) => l.worker === fresh));
    expect(refused.pid).toBe(pids.get(fresh));
    expect(refused.problems.join("\n")).toContain('unknown field "budjet"');
    const ready = JSON.parse((await fromWorker(fresh, "/readyz")).text);
    expect(ready.checks.config).toEqual({ status: "reload_refused", problems: 1 });
    const view = JSON.parse((await fromWorker(fresh, "/admin/v1/config", undefined, { authorization: `Bearer ${ADMIN}` })).text);
    expect(view.config.restart_pending).toEqual(["store.prefix"]);
  }, 90_000);

  it("when the refused edit is undone while a replacement starts, every worker says ok once it listens", async () => {
    const refusedBefore = linesOf(err, "config reload refused; still serving the previous config").length;
    const importsBefore = readFileSync(imports, "utf8").split("\n").filter(Boolean).length;
    const alive = (id: number) => { try { return process.kill(pids.get(id)!, 0); } catch { return false; } };
    const [dying, survivor] = [...pids.keys()].filter(alive) as [number, number];
    writeFileSync(hold, "");
    const before = linesOf(err, "worker listening").length;
    process.kill(pids.get(dying)!, "SIGKILL");
    // The replacement has the others' config and refusal, and waits in the plugin's import: the operator reverts.
    await until("the replacement's plugin import to begin", () =>
      readFileSync(imports, "utf8").split("\n").filter(Boolean).length > importsBefore || undefined);
    writeFileSync(file, accepted);
    await until("the survivor to reload the reverted file", async () => {
      const ready = JSON.parse((await fromWorker(survivor, "/readyz")).text);
      return ready.checks.config.status === "ok" || undefined;
    });
    rmSync(hold);
    const line = await until("the replacement to listen", () => linesOf(err, "worker listening")[before]);
    pids.set(line.worker, line.pid);
    const fresh = line.worker as number;
    await until("the replacement to say its config is current", async () => {
      const ready = JSON.parse((await fromWorker(fresh, "/readyz")).text);
      return ready.checks.config.status === "ok" || undefined;
    }, 10_000);
    for (const id of [fresh, survivor]) {
      const ready = JSON.parse((await fromWorker(id, "/readyz")).text);
      expect(ready.checks.config, `worker ${id}`).toMatchObject({ status: "ok" });
    }
    // Its settling reload found nothing to refuse: the refusal is not logged again.
    expect(linesOf(err, "config reload refused; still serving the previous config").slice(refusedBefore)).toEqual([]);
    expect(existsSync(hold)).toBe(false);
  }, 90_000);
});

// --no-watch: the workers read the file only at a SIGHUP. A replacement carries what the others hold: their
// restart_pending from its first answer, their refused reload (so /readyz with ready_requires_current_config does not
// flap between workers), a first reload that says what theirs says. One that cannot start (a plugin file broken on
// disk since) is one line from the primary, and the running workers' /readyz counts the missing worker.
describe("start --workers 2 --no-watch: a replacement reports the reload state the others report", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let proc: ChildProcess;
  let port: number;
  let err = "";
  let file: string;
  let plugin: string;
  let config: any;
  const pids = new Map<number, number>();
  const admin = { authorization: `Bearer ${ADMIN}` };

  const fromWorker = (id: number, path: string, body?: unknown, headers?: Record<string, string>) =>
    until(`worker ${id} to answer ${path}`, async () => {
      const r = await send(port, path, body, headers);
      return r.worker === String(id) ? r : undefined;
    });

  /** kill -9 worker `id`, and the "worker listening" lines before it. */
  function kill(id: number): number {
    const before = linesOf(err, "worker listening").length;
    process.kill(pids.get(id)!, "SIGKILL");
    return before;
  }

  /** SIGHUP to the primary; once every live worker logged a reload line (matching `msg`) after `since` characters of the log. */
  async function sighup(msg: RegExp, workers: number[]): Promise<any[]> {
    const since = err.length;
    proc.kill("SIGHUP");
    return until("every worker to reload", () => {
      const lines = linesOf(err.slice(since), msg).filter((l) => workers.includes(l.worker));
      return new Set(lines.map((l) => l.worker)).size === workers.length ? lines : undefined;
    });
  }

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI();
    const dir = mkdtempSync(join(tmpdir(), "mg-replace-nowatch-"));
    file = join(dir, "gateway.yaml");
    plugin = join(dir, "passer.mjs");
    writeFileSync(plugin, `export default { name: "passer", async handle(ctx, next) { await next(); } };\n`);
    config = policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url, prefix: `mgn-${ulid()}:` }, acme: { budget: { usd: "5", period: "total" } } });
    config.admin_keys = [{ id: "viewer", sha256: sha256Hex(ADMIN), scope: "read" }];
    config.server = { ready_requires_current_config: true };
    config.plugins = { passer: { module: plugin } };
    config.pipeline = ["auth", "passer", ...builtins.defaultPipeline().filter((n: string) => n !== "auth")];
    writeFileSync(file, YAML.stringify(config));
    port = await freePort();
    proc = spawn(process.execPath, ["bin/model-gateway.mjs", "start", "--config", file, "--port", String(port), "--host", "127.0.0.1", "--metrics-port", "0", "--workers", "2", "--no-watch"], {
      cwd: ROOT, stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (err += d));
    await until("the cluster to listen", () => out.match(/pids ([\d ]+)\)/)?.[1], 60_000);
  }, 90_000);

  afterAll(async () => {
    if (proc && proc.exitCode === null) {
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    }
    await fake?.close();
    await redis?.stop();
  });

  it("after a SIGHUP every worker refused, the replacement is not ready either, from its first answer, and logs the refusal", async () => {
    config.store.prefix = `mgn-edited-${ulid()}:`; // waits for a restart
    writeFileSync(file, YAML.stringify(config));
    const waits = await sighup(/take effect only when the gateway restarts/, [1, 2]);
    for (const l of waits) pids.set(l.worker, l.pid);
    config.projects.acme.budjet = config.projects.acme.budget;
    delete config.projects.acme.budget;
    writeFileSync(file, YAML.stringify(config));
    await sighup(/^config reload refused/, [1, 2]);
    expect((await fromWorker(2, "/readyz")).status).toBe(503);

    const before = kill(1);
    // The new worker's first answer, as soon as it takes connections: the others' restart_pending and refusal.
    const first = await until("the new worker's first answer", async () => {
      const r = await send(port, "/admin/v1/config", undefined, admin).catch(() => undefined); // the dying worker's connection
      return r && r.worker !== "1" && r.worker !== "2" ? r : undefined;
    });
    const fresh = Number(first.worker);
    const view = JSON.parse(first.text);
    expect(view.config.restart_pending).toEqual(["store.prefix"]);
    expect(view.config.status).toBe("reload_refused");
    const ready = await fromWorker(fresh, "/readyz");
    expect(ready.status, ready.text).toBe(503);
    expect(JSON.parse(ready.text).checks.config).toEqual({ status: "reload_refused", problems: 1 });
    const listening = await until("the new worker to listen", () => linesOf(err, "worker listening")[before]);
    expect(listening.worker).toBe(fresh);
    pids.set(fresh, listening.pid);
    // Its own lines: the refusal the others logged, and the restart-pending warning, both before it listened.
    const refused = linesOf(err, "config reload refused; still serving the previous config").filter((l) => l.worker === fresh);
    expect(refused).toHaveLength(1);
    expect(refused[0].problems.join("\n")).toContain('unknown field "budjet"');
    const warned = linesOf(err, /^started in place of a worker that died/).find((l) => l.worker === fresh);
    expect(warned?.settings).toEqual(["store.prefix"]);
    expect(Date.parse(refused[0].time)).toBeLessThanOrEqual(Date.parse(listening.time));
    expect(Date.parse(warned.time)).toBeLessThanOrEqual(Date.parse(listening.time));
    // /readyz on every worker agrees: 503 whichever answers.
    for (let i = 0; i < 6; i++) expect((await send(port, "/readyz")).status).toBe(503);

    // Fixed, and signalled: each worker's reload line says the same (nothing changed since what they serve).
    config.projects.acme.budget = config.projects.acme.budjet;
    delete config.projects.acme.budjet;
    writeFileSync(file, YAML.stringify(config));
    const reloaded = await sighup(/^config reloaded(: nothing changed)?$/, [2, fresh]);
    expect(reloaded.map((l) => [l.msg, l.changes])).toEqual(reloaded.map(() => ["config reloaded: nothing changed", {}]));
    for (let i = 0; i < 4; i++) expect((await send(port, "/readyz")).status).toBe(200);
  }, 90_000);

  it("a replacement that cannot start (its plugin's file broken since) is one line from the primary; /readyz counts the missing worker", async () => {
    appendFileSync(plugin, "export const broken = ;\n");
    const live = [...pids.keys()].filter((id) => id !== 1).sort((a, b) => a - b);
    const victim = live[0]!, survivor = live[1]!;
    const deathsBefore = linesOf(err, "worker died; starting a new one").length;
    kill(victim);
    const line = await until("the primary to say a worker cannot start", () => linesOf(err, /cannot start: the gateway keeps serving with 1 of 2 workers/)[0]);
    expect(line.reason).toMatch(/passer/);
    expect(line.listening).toBe(1);
    const ready = JSON.parse((await fromWorker(survivor, "/readyz")).text);
    expect(ready.checks.workers).toEqual({ status: "missing", listening: 1, configured: 2 });
    // Tried again with backoff (0.5 s, 1 s, 2 s): still said once, and nothing reads as the gateway refusing to start.
    await new Promise((r) => setTimeout(r, 6000));
    expect(linesOf(err, /cannot start: the gateway keeps serving/)).toHaveLength(1);
    expect(linesOf(err, "worker died; starting a new one")).toHaveLength(deathsBefore + 1);
    expect(err).not.toContain("refusing to start");
    expect((await fromWorker(survivor, "/api/v1/chat/completions", chat(), auth())).status).toBe(200);

    writeFileSync(plugin, `export default { name: "passer", async handle(ctx, next) { await next(); } };\n`);
    await until("every worker to listen again", () => linesOf(err, /^every worker listens again/)[0], 60_000);
    const back = JSON.parse((await fromWorker(survivor, "/readyz")).text);
    expect(back.checks.workers).toEqual({ status: "all", listening: 2, configured: 2 });
  }, 120_000);
});
