// start --workers 2: a shutdown keeps each worker's metrics listener until one more scrape has read what its drain
// counted. A scrape was noted twice on the worker it reached (its part sent for the gather, then its own answer), so
// that worker took the gather's few milliseconds for the scrape interval, gave up a second after its drain, and the
// requests it finished while draining never reached Prometheus. A real scraper here: every 3 s, SIGTERM right after
// one, streams on both workers finishing during the drain; the next scrape must count all of them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { request } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { ulid } from "ulid";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";
import { freePort } from "./helpers/ports.ts";
import { auth, chat, policyConfig } from "./helpers/policy-config.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCRAPE_EVERY_MS = 3000;

/** One HTTP exchange on its own connection, so the cluster may hand it to either worker. */
function exchange(port: number, path: string, body?: unknown, headers: Record<string, string> = {}, method?: string): Promise<{ status: number; worker?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request({
      host: "127.0.0.1", port, path, method: method ?? (data ? "POST" : "GET"), agent: false, timeout: 10_000,
      headers: { connection: "close", ...(data ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(data)) } : {}), ...headers },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, worker: res.headers["x-mg-worker"] as string | undefined, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("no answer in time")));
    req.end(data);
  });
}

/** The chat requests answered 200, summed over workers, models and providers. */
function chats200(text: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith('gateway_requests_total{endpoint="chat"') && line.includes('code="200"')) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: TestRedis;
let fake: FakeOpenAI;

beforeAll(async () => {
  redis = await startRedis();
  // About 0.8 s a stream: it ends during the drain, well inside the grace.
  fake = await startFakeOpenAI({ text: Array.from({ length: 30 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 25 });
}, 60_000);
afterAll(async () => {
  await fake?.close();
  await redis?.stop();
});

/** `start --workers 2` on Redis with a 10 s grace, its ports, and its output so far. */
async function startCluster() {
  const file = join(mkdtempSync(join(tmpdir(), "mg-wfinal-")), "gateway.yaml");
  const config = policyConfig(fake.baseUrl, { store: { kind: "redis", url: redis.url, prefix: `mgwf-${ulid()}:` } }) as Record<string, any>;
  config.server = { ...(config.server ?? {}), shutdown_grace_ms: 10_000 };
  writeFileSync(file, YAML.stringify(config));
  const [port, metricsPort] = [await freePort(), await freePort()];
  const proc = spawn(process.execPath, ["bin/model-gateway.mjs", "start", "--config", file, "--port", String(port), "--host", "127.0.0.1",
    "--metrics-port", String(metricsPort), "--no-watch", "--workers", "2"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const output = { out: "", err: "" };
  proc.stdout!.on("data", (d) => (output.out += d));
  proc.stderr!.on("data", (d) => (output.err += d));
  const exit = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  for (let i = 0; i < 300 && !output.out.includes("listening on"); i++) await sleep(100);
  expect(output.out, output.err).toContain("listening on");
  return { proc, port, metricsPort, output, exit };
}

/** Four streams, at least one on each worker, running when the cluster is sent SIGTERM; resolves their answers. */
async function streamsCutBySigterm(c: Awaited<ReturnType<typeof startCluster>>) {
  const asked = fake.requests.length;
  const streams = Array.from({ length: 4 }, () => exchange(c.port, "/api/v1/chat/completions", chat("openai/gpt-4o-mini", { stream: true }), auth()));
  for (let i = 0; i < 100 && fake.requests.length < asked + 4; i++) await sleep(20);
  c.proc.kill("SIGTERM");
  const answered = await Promise.all(streams);
  expect(answered.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  expect(new Set(answered.map((r) => r.worker)), "each worker drains some of them").toEqual(new Set(["1", "2"]));
}

describe("start --workers 2: the scrape after a SIGTERM", () => {
  it("counts the requests every worker finished while draining, with a scraper every 3 s", async () => {
    const c = await startCluster();
    try {
      const scrape = async () => (await exchange(c.metricsPort, "/metrics")).text;
      // A scraper: two scrapes, SCRAPE_EVERY_MS apart (each reaches both workers through the primary's gather).
      await scrape();
      await sleep(SCRAPE_EVERY_MS);
      const before = chats200(await scrape());
      await streamsCutBySigterm(c);
      // The scraper's next scrape, on its schedule: both workers are still up for it.
      await sleep(SCRAPE_EVERY_MS - 200);
      const after = chats200(await scrape());
      expect(after - before, c.output.err).toBe(4);
      expect(await c.exit).toBe(0);
    } finally {
      if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
    }
  }, 60_000);

  // An uptime probe's HEAD reads no counts: it is no scrape. It was counted as one with --workers N (not on one
  // process), so the probe's next HEAD ended a draining worker's wait and the scraper's GET found the port closed.
  it("a HEAD /metrics probe every 300 ms does not end the wait: the scraper's next GET still counts the drain", async () => {
    const c = await startCluster();
    let probing = true;
    const probe = (async () => {
      while (probing) {
        await exchange(c.metricsPort, "/metrics", undefined, {}, "HEAD").catch(() => {});
        await sleep(300);
      }
    })();
    try {
      const scrape = async () => (await exchange(c.metricsPort, "/metrics")).text;
      await scrape();
      await sleep(SCRAPE_EVERY_MS);
      const before = chats200(await scrape());
      await streamsCutBySigterm(c);
      await sleep(SCRAPE_EVERY_MS - 200);
      const after = chats200(await scrape());
      expect(after - before, c.output.err).toBe(4);
      expect(await c.exit).toBe(0);
    } finally {
      probing = false;
      await probe;
      if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
    }
  }, 60_000);
});
