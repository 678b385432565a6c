// `model-gateway start --workers 2` on a real redis-server: two worker processes behind one port. Every request goes
// over a fresh TCP connection, so the cluster's round-robin spreads them; `x-mg-worker` says which worker answered.
// Limits, budgets and idempotency hold across the workers, a SIGHUP reload reaches both, a killed worker is
// replaced, SIGTERM ends them all with exit 0, and a per-process store is refused. With no server.signing_secret
// the workers share the primary's, so a signed image URL works whichever worker gets its connection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import Big from "big.js";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { freePort, portTaken } from "./helpers/ports.ts";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { auth, chat, KEY, policyConfig } from "./helpers/policy-config.ts";
import { RedisStore } from "../core/store/redis.ts";
import { periodOf } from "../core/store/periods.ts";
import { toPico } from "../core/money/money.ts";
import { sha256Hex } from "../core/keys/keys.ts";
import { builtins } from "../core/builtins.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LIMITED = testKey("wlimited");
const SPENDER = testKey("wspender");
const BUDGET = "0.01";
const ADMIN = "mg_admin_read_key_for_workers_001";

/** GET /metrics on its own connection, so the cluster may hand it to either worker; `timeoutMs`: give up on it then. */
function scrape(port: number, timeoutMs?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/metrics", agent: false, headers: { connection: "close" }, timeout: timeoutMs }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}: ${text}`))));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("no answer in time")));
    req.end();
  });
}

/** The sum of every sample of `name` (any labels) in a Prometheus text. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  return sum;
}

interface Reply {
  status: number;
  worker: string | undefined;
  replayed: string | undefined;
  text: string;
}

/** One POST on its own connection (no keep-alive pool), so the cluster may hand it to either worker. */
function post(port: number, path: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = request({
      host: "127.0.0.1", port, path: `/api/v1${path}`, method: "POST", agent: false,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(data)), connection: "close", ...headers },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({
        status: res.statusCode!, worker: res.headers["x-mg-worker"] as string | undefined,
        replayed: res.headers["idempotent-replayed"] as string | undefined, text,
      }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(data);
  });
}

interface Cluster {
  proc: ChildProcess;
  port: number;
  pids: number[];
  metricsPort: number;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

/**
 * `detached`: a process group of its own, so a test can signal the group as a terminal's Ctrl-C does. `spawned`: told
 * the primary's stderr so far at once, before it listens. A port (API or metrics) that a test file beside this one
 * took before the cluster listened is tried again on new ones (`spawned` is told the new primary's stderr).
 */
async function startCluster(configFile: string, workers: string, detached = false, spawned?: (err: () => string) => void): Promise<Cluster> {
  for (let attempt = 0; ; attempt++) {
    const c = await startClusterOn(await freePort(), await freePort(), configFile, workers, detached, spawned);
    if (c.pids.length > 0 || attempt >= 2 || !portTaken(c.err())) return c;
  }
}

async function startClusterOn(port: number, metricsPort: number, configFile: string, workers: string, detached: boolean, spawned?: (err: () => string) => void): Promise<Cluster> {
  const proc = spawn(process.execPath, ["bin/model-gateway.mjs", "start", "--config", configFile, "--port", String(port), "--host", "127.0.0.1", "--metrics-port", String(metricsPort), "--no-watch", "--workers", workers], {
    cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], detached,
  });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (err += d));
  spawned?.(() => err);
  const exit = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  // Not listening: once its output is all read ("close" comes after "exit"), which says why.
  const closed = new Promise((r) => proc.once("close", r));
  const listening = await Promise.race([
    new Promise<boolean>((r) => proc.stdout!.on("data", () => out.includes("listening on") && r(true))),
    exit.then(() => closed).then(() => false),
  ]);
  const pids = listening ? out.match(/pids ([\d ]+)\)/)![1]!.trim().split(" ").map(Number) : [];
  return { proc, port, pids, metricsPort, out: () => out, err: () => err, exit };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, f: () => Promise<T | undefined>, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("start --workers 2 on one redis-server", () => {
  let redis: TestRedis;
  let fake: FakeOpenAI;
  let gw: Cluster;
  let store: RedisStore;
  let configFile: string;
  let config: any;
  const prefix = `mgw-${ulid()}:`;

  beforeAll(async () => {
    redis = await startRedis();
    fake = await startFakeOpenAI({ chunkDelayMs: 20 });
    configFile = join(mkdtempSync(join(tmpdir(), "mg-workers-")), "gateway.yaml");
    config = policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url, prefix } });
    config.projects.limited = { keys: [keyEntry("lk", LIMITED, { rate_limits: { rpm: 5 } })] };
    config.projects.spender = { keys: [keyEntry("sk", SPENDER)], budget: { usd: BUDGET, period: "total" } };
    config.providers.sim = { protocol: "sim", sim: { image_ms: 5 } };
    config.models["openai/sim-pixel"] = { type: "image", endpoints: [{ provider: "sim", model: "pixel" }] };
    config.admin_keys = [{ id: "viewer", sha256: sha256Hex(ADMIN), scope: "read" }];
    expect(config.server?.signing_secret).toBeUndefined();
    writeFileSync(configFile, YAML.stringify(config));
    gw = await startCluster(configFile, "2");
    expect(gw.pids, gw.err()).toHaveLength(2);
    store = await RedisStore.connect(redis.url, prefix);
  }, 60_000);
  afterAll(async () => {
    if (gw && gw.proc.exitCode === null) gw.proc.kill("SIGKILL");
    await store?.close();
    await fake?.close();
    await redis?.stop();
  });

  it("an RPM limit of 5 lets exactly 5 of 14 concurrent requests through, both workers serving", async () => {
    const rs = await Promise.all(Array.from({ length: 14 }, () => post(gw.port, "/chat/completions", chat(), auth(LIMITED))));
    expect(new Set(rs.map((r) => r.worker))).toEqual(new Set(["1", "2"]));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = rs.filter((r) => r.status === 429);
    expect(refused).toHaveLength(9);
    expect(JSON.parse(refused[0]!.text).error.code).toBe("RATE_LIMITED");
  });

  it("50 concurrent requests against a nearly exhausted budget never overspend it", async () => {
    const body = chat();
    const worst = new Big(JSON.stringify(body).length).times("0.000001").plus(new Big(20).times("0.000002"));
    const spent = new Big(BUDGET).minus(worst.times(3.5)); // room for three reservations
    const p = periodOf("total", Date.now());
    await store.record({
      generationId: `gen_seed_${ulid()}`, requestId: "seed", ts: Date.now(), keyId: "sk", project: "spender", endpoint: "chat",
      model: "openai/gpt-4o-mini", provider: "up", attempts: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0,
      reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, costUsd: spent.toFixed(), costPico: toPico(spent), latencyMs: 0,
      ttftMs: null, status: 200, outcome: "ok", sandbox: false, estimated: false,
    });
    const rs = await Promise.all(Array.from({ length: 50 }, () => post(gw.port, "/chat/completions", body, auth(SPENDER))));
    expect(new Set(rs.map((r) => r.worker))).toEqual(new Set(["1", "2"]));
    const ok = rs.filter((r) => r.status === 200).length;
    const refused = rs.filter((r) => r.status === 402);
    expect(ok).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(0);
    expect(ok + refused.length).toBe(50);
    const ledger = await store.ledger({ project: "spender" });
    expect(ledger).toHaveLength(ok + 1);
    expect(ledger.reduce((s, e) => s.plus(e.costUsd), new Big(0)).lte(BUDGET)).toBe(true);
    expect((await store.spent("spender", p.key, p.start)) > 0n).toBe(true);
  });

  it("an idempotent pair sent at once, one to each worker, reaches the upstream once", async () => {
    const body = chat("openai/gpt-4o-mini", { stream: true });
    // The round-robin may give both connections to one worker; every pair must hold, and one must have been split.
    let split = false;
    for (let i = 0; i < 8 && !split; i++) {
      const key = ulid();
      const before = fake.requests.length;
      const [a, b] = await Promise.all([0, 1].map(() => post(gw.port, "/chat/completions", body, auth(KEY, { "idempotency-key": key }))));
      expect(fake.requests.length - before).toBe(1);
      expect([a!.status, b!.status]).toEqual([200, 200]);
      expect([a!.replayed, b!.replayed].filter((x) => x === "true")).toHaveLength(1);
      expect(a!.text).toBe(b!.text);
      split = a!.worker !== b!.worker;
    }
    expect(split).toBe(true);
  });

  it("with no server.signing_secret, a signed image URL from one worker is served by both; the warning is logged once", async () => {
    const made = await post(gw.port, "/images/generations", { model: "openai/sim-pixel", prompt: "a fox", size: "32x32", response_format: "url" }, auth());
    expect(made.status, made.text).toBe(200);
    const url = new URL(JSON.parse(made.text).data[0].url);
    const get = () => new Promise<{ status: number; worker?: string }>((resolve, reject) => {
      request({ host: "127.0.0.1", port: gw.port, path: url.pathname + url.search, agent: false, headers: { connection: "close" } }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, worker: res.headers["x-mg-worker"] as string | undefined }));
      }).on("error", reject).end();
    });
    const rs = await Promise.all(Array.from({ length: 12 }, get));
    expect(new Set(rs.map((r) => r.worker))).toEqual(new Set(["1", "2"]));
    expect(rs.map((r) => r.status)).toEqual(Array(12).fill(200));
    // The store is Redis, so other replicas could be sharing it: said once, by the primary.
    expect(gw.err().match(/server\.signing_secret is not set/g)).toHaveLength(1);
  });

  it("GET /metrics counts the whole cluster, whichever worker the scrape reaches", async () => {
    const before = total(await scrape(gw.metricsPort), "gateway_requests_total");
    const rs = await Promise.all(Array.from({ length: 10 }, () => post(gw.port, "/chat/completions", chat(), auth())));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(rs.map((r) => r.worker))).toEqual(new Set(["1", "2"]));
    // A request is counted once its response is out: wait for the last ones, then every scrape must agree.
    const after = await until("the 10 requests in the count", async () => {
      const n = total(await scrape(gw.metricsPort), "gateway_requests_total");
      return n === before + 10 ? n : undefined;
    });
    for (let i = 0; i < 6; i++) {
      const text = await scrape(gw.metricsPort);
      expect(total(text, "gateway_requests_total")).toBe(after);
      expect(total(text, "gateway_store_up")).toBe(1); // the lowest of the workers' 1s, not their sum
      expect(total(text, "gateway_config_last_reload_success")).toBe(1);
    }
  });

  it("the console's live traffic (GET /admin/v1/traffic) is the whole cluster's, whichever worker answers", async () => {
    /** /admin/v1/traffic on its own connection: the answer and the worker that gave it. */
    const traffic = () => new Promise<{ scope: string; pid: number; sampling_since: string | null; points: { requests: number }[] }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: gw.port, path: "/admin/v1/traffic", agent: false, headers: { connection: "close", authorization: `Bearer ${ADMIN}` } }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`HTTP ${res.statusCode}: ${text}`))));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
    // Each worker samples every 10 s, the cluster's figures from the moment it joined: both already have.
    const since = new Map<number, number>();
    await until("both workers sampling the cluster", async () => {
      const t = await traffic();
      if (t.scope === "cluster" && t.sampling_since) since.set(t.pid, Date.parse(t.sampling_since));
      return since.size === 2 ? true : undefined;
    }, 40);
    const rs = await Promise.all(Array.from({ length: 10 }, () => post(gw.port, "/chat/completions", chat(), auth())));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(rs.map((r) => r.worker))).toEqual(new Set(["1", "2"]));
    // Both workers' next readings (10 s after their first) come after all 10.
    await new Promise((r) => setTimeout(r, Math.max(...since.values()) + 10_500 - Date.now()));
    // Each worker's hour holds all 10 (and the /traffic calls counted beside them), not the half it served itself.
    const seen = new Map<number, number>();
    await until("an answer from each worker", async () => {
      const t = await traffic();
      expect(t.scope).toBe("cluster");
      seen.set(t.pid, t.points.reduce((n, p) => n + p.requests, 0));
      return seen.size === 2 ? true : undefined;
    }, 40);
    for (const requests of seen.values()) expect(requests).toBeGreaterThanOrEqual(10);
  }, 45_000);

  it("every worker runs with MALLOC_ARENA_MAX=2 unless the environment set it", () => {
    expect(gw.pids).toHaveLength(2);
    const want = `MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX || "2"}`;
    for (const pid of gw.pids) expect(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")).toContain(want);
  });

  it("SIGHUP to the primary reloads the config in every worker", async () => {
    const body = chat("openai/gpt-4o-new");
    expect((await post(gw.port, "/chat/completions", body, auth())).status).toBe(404); // unknown model
    config.models["openai/gpt-4o-new"] = { ...config.models["openai/gpt-4o"] };
    writeFileSync(configFile, YAML.stringify(config));
    gw.proc.kill("SIGHUP");
    // Until both workers have answered the new model (a worker left on the old config never would).
    const served = new Set<string>();
    await until("both workers to serve the new model", async () => {
      const r = await post(gw.port, "/chat/completions", body, auth());
      if (r.status === 200) served.add(r.worker!);
      return served.size === 2 ? true : undefined;
    });
    expect(served).toEqual(new Set(["1", "2"]));
  }, 30_000);

  it("a SIGHUP that reaches the primary while its workers are starting (config read, not listening yet) is done in each once it listens", async () => {
    // Each worker's setup says it has begun (its primary's pid in the file), then waits for the test to let it finish.
    const dir = mkdtempSync(join(tmpdir(), "mg-workers-hup-"));
    const go = join(dir, "go");
    writeFileSync(join(dir, "gate.mjs"), `import { existsSync, writeFileSync } from "node:fs";
export default { name: "gate", handle: (ctx, next) => next(),
  setup() {
    writeFileSync(${JSON.stringify(dir)} + "/started-" + process.pid, String(process.ppid));
    return new Promise((done) => { const t = setInterval(() => { if (existsSync(${JSON.stringify(go)})) { clearInterval(t); done({}); } }, 20); });
  } };
`);
    const file = join(dir, "gateway.yaml");
    const gated = { ...config, models: { ...config.models }, plugins: { gate: { module: join(dir, "gate.mjs") } }, pipeline: ["auth", "gate", ...builtins.defaultPipeline().filter((n) => n !== "auth")] };
    writeFileSync(file, YAML.stringify(gated));
    let primaryErr = () => "";
    const starting = startCluster(file, "2", false, (err) => (primaryErr = err));
    const primary = await until("both workers to be in their setup", async () => {
      const started = readdirSync(dir).filter((f) => f.startsWith("started-"));
      return started.length === 2 ? Number(readFileSync(join(dir, started[0]!), "utf8")) : undefined;
    }, 600);
    gated.models["openai/gpt-4o-later"] = { ...config.models["openai/gpt-4o"] }; // the edit the signal announces
    writeFileSync(file, YAML.stringify(gated));
    // Twice: still one reload for each worker.
    process.kill(primary, "SIGHUP");
    await until("the primary to take the SIGHUP", async () => (primaryErr().includes("SIGHUP: reloading") ? true : undefined));
    process.kill(primary, "SIGHUP");
    await until("the primary to take the second", async () => ((primaryErr().match(/SIGHUP: reloading/g) ?? []).length === 2 ? true : undefined));
    writeFileSync(go, "");
    const c = await starting;
    try {
      expect(c.pids, c.err()).toHaveLength(2);
      const body = chat("openai/gpt-4o-later");
      const served = new Set<string>();
      await until("both workers to serve the model added before the SIGHUP", async () => {
        const r = await post(c.port, "/chat/completions", body, auth());
        if (r.status === 200) served.add(r.worker!);
        return served.size === 2 ? true : undefined;
      });
      expect(served).toEqual(new Set(["1", "2"]));
      // The primary's log line may reach its stderr a moment after the worker serves: wait for it, then count.
      await until("the primary to log each worker's owed reload", async () => ((c.err().match(/reload asked for while it started/g) ?? []).length >= 2 ? true : undefined));
      expect(c.err().match(/reload asked for while it started/g)).toHaveLength(2); // one reload each, not one per signal
    } finally {
      c.proc.kill("SIGTERM");
      await c.exit;
    }
  }, 60_000);

  it("a worker killed with SIGKILL is replaced, with a log line; /metrics counters never go down meanwhile", async () => {
    const before = total(await scrape(gw.metricsPort), "gateway_requests_total");
    expect(before).toBeGreaterThan(20); // both workers have served the tests above
    process.kill(gw.pids[0]!, "SIGKILL");
    const line = await until("the restart line", async () => gw.err().split("\n").find((l) => l.includes("worker died; starting a new one")), 400);
    expect(JSON.parse(line)).toMatchObject({ pid: gw.pids[0], signal: "SIGKILL" });
    const listening = await until("the new worker", async () => gw.err().split("\n").find((l) => l.includes('"worker listening"')), 600);
    const fresh = JSON.parse(listening) as { worker: number; pid: number };
    gw.pids.push(fresh.pid);
    const seen = new Set<string>();
    await until("the new worker to serve", async () => {
      const r = await post(gw.port, "/chat/completions", chat(), auth());
      expect(r.status).toBe(200);
      seen.add(r.worker!);
      return seen.has(String(fresh.worker)) ? true : undefined;
    });
    // The dead worker's count stays in the sum (Prometheus reads a drop as a reset); the new one adds from zero.
    const replaced = total(await scrape(gw.metricsPort), "gateway_requests_total");
    expect(replaced).toBeGreaterThanOrEqual(before);
    // A stopped worker (no answer in time) counts with its last answer. A scrape the cluster hands to the stopped
    // worker itself waits for it: try again, the next connection goes to the other one.
    const stopped = gw.pids.find((p) => p !== gw.pids[0] && alive(p))!;
    process.kill(stopped, "SIGSTOP");
    try {
      let text: string | undefined;
      for (let i = 0; i < 4 && text === undefined; i++) text = await scrape(gw.metricsPort, 6000).catch(() => undefined);
      expect(total(text!, "gateway_requests_total")).toBeGreaterThanOrEqual(replaced);
    } finally {
      process.kill(stopped, "SIGCONT");
    }
    await until("the primary's warning", async () => (gw.err().includes("their last answered metrics stand in for them") ? true : undefined));
  }, 60_000);

  it("SIGTERM to the primary shuts every worker down; the primary exits 0", async () => {
    // A scraper's cadence first (every 2 s): a draining worker waits for the interval it saw plus 1 s, and the tests
    // above scraped back to back, which on a loaded machine left too little room for the scrape below.
    for (let i = 0; i < 2; i++) {
      await scrape(gw.metricsPort);
      await new Promise((r) => setTimeout(r, 2000));
    }
    const before = total(await scrape(gw.metricsPort), "gateway_requests_total");
    const inFlight = post(gw.port, "/chat/completions", chat("openai/gpt-4o-mini", { stream: true }), auth());
    await new Promise((r) => setTimeout(r, 20));
    gw.proc.kill("SIGTERM");
    await inFlight;
    // The drain's counts reach one more scrape of the whole cluster before the workers' metrics listeners close.
    await until("a scrape after the drain, counting its request", async () => {
      const text = await scrape(gw.metricsPort).catch(() => undefined);
      return text !== undefined && total(text, "gateway_requests_total") === before + 1 ? true : undefined;
    });
    expect(await gw.exit).toBe(0);
    expect(gw.err()).toContain("shutting down every worker");
    expect(gw.err().match(/"shutdown complete"/g)).toHaveLength(2);
    for (const pid of gw.pids) expect(alive(pid)).toBe(false);
  }, 40_000);

  it("Ctrl-C: a worker's own SIGINT arriving after the primary's shutdown message is not a second signal", async () => {
    // Ctrl-C signals the whole process group: each worker gets the signal and the primary's message, in either
    // order. Made deterministic: slow streams keep both workers draining, the primary's message goes first.
    fake.pace = (body) => (body.user === "slow" ? 150 : undefined);
    const c = await startCluster(configFile, "2");
    expect(c.pids, c.err()).toHaveLength(2);
    const streams = Array.from({ length: 4 }, () => post(c.port, "/chat/completions", chat("openai/gpt-4o-mini", { stream: true, user: "slow" }), auth()));
    await until("both workers to have a stream upstream", async () => (fake.requests.filter((r) => (r.body as any)?.user === "slow").length >= 4 ? true : undefined));
    c.proc.kill("SIGINT");
    await until("both workers to start draining", async () => ((c.err().match(/"shutting down: no new connections/g) ?? []).length === 2 ? true : undefined));
    for (const pid of c.pids) process.kill(pid, "SIGINT"); // both still draining: their streams are not done
    expect(await c.exit).toBe(0);
    expect(c.err()).not.toContain("again during shutdown");
    const rs = await Promise.all(streams);
    expect(new Set(rs.map((r) => r.worker))).toEqual(new Set(["1", "2"]));
    for (const r of rs) expect(r.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    fake.pace = undefined;
  }, 60_000);
});

describe("start --workers with a per-process store", () => {
  it("refuses --workers 2 on SQLite, saying why, before forking anything", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mg-workers-sqlite-")), "gateway.yaml");
    writeFileSync(file, YAML.stringify({ store: { kind: "sqlite", path: join(tmpdir(), `mg-w-${ulid()}.db`) } }));
    const c = await startCluster(file, "2");
    expect(await c.exit).toBe(1);
    expect(c.err()).toContain("refusing to start: --workers 2 needs store: { kind: redis }");
    expect(c.out()).not.toContain("listening on");
  }, 30_000);

  it("refuses a --workers value that is not a count", async () => {
    const c = await startCluster("gateway.yaml", "two");
    expect(await c.exit).toBe(2); // a usage error, as a bad --port
    expect(c.err()).toContain("--workers must be a whole number from 1 to 256, or auto (got two)");
  }, 30_000);
});
