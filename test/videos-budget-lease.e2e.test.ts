// A video job carries the budget hold of the request that started it and may run up to job_timeout_seconds
// (default 30 min). The hold must not lapse under it: a 15-minute lease let a second job past the budget after 15
// minutes and both were billed ($0.80 on a $0.50 budget). Still a lease: a hold no job can be carrying any more
// (its process died) is freed after job_timeout_seconds + 15 min.
// SQLite (local holds) with a faked clock; Redis (server TIME, not fakeable) by the hold's expiry in the store.
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { Redis } from "ioredis";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-video-lease-"));
const MIN = 60_000;

/** Held 0.3 s, made in 1.5 s: the starting request gets 504 and its job runs on with the hold. Worst case $0.40. */
function config(store: Record<string, unknown>, jobTimeoutSeconds?: number) {
  const cfg: any = mediaConfig({
    server: { assets_dir: join(dir, `assets-${ulid()}`) },
    sim: { video_ms: 1500 },
    models: {
      "sim/slow-reel": {
        type: "video",
        limits: { durations: [2, 4], timeout_seconds: 0.3, max_concurrent_jobs: 3, ...(jobTimeoutSeconds ? { job_timeout_seconds: jobTimeoutSeconds } : {}) },
        endpoints: [{ provider: "sim", model: "reel", pricing: { video_second: "0.1" } }],
      },
    },
  });
  cfg.projects.media.budget = { usd: "0.5", period: "total" };
  cfg.store = store;
  return cfg;
}
const body = { model: "sim/slow-reel", prompt: "a long one", duration: 4 };

let gw: TestGateway | undefined;
let redis: TestRedis | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await gw?.close();
  gw = undefined;
});
afterAll(async () => {
  await redis?.stop();
});

/** Date.now() `ms` ahead of the real clock from here on (timers are untouched). */
function jumpClock(ms: number) {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, "now").mockImplementation(() => real() + ms);
}

async function videoRecords(g: TestGateway, n: number) {
  const until = Date.now() + 6000;
  for (;;) {
    const records = (await g.gateway.store.ledger({})).filter((e) => e.endpoint === "videos");
    if (records.length >= n || Date.now() > until) return records;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a video job's budget hold", () => {
  it("stays held while the job may still run (16 and 40 minutes in): a second job is 402, one bill of $0.40", async () => {
    gw = await startTestGateway(config({ kind: "sqlite", path: join(dir, `a-${ulid()}.db`) }));
    const a = await postJson(`${gw.baseURL}/videos`, body, auth(LIVE));
    expect(a.status).toBe(504); // gave up waiting; the job runs on
    expect((await postJson(`${gw.baseURL}/videos`, body, auth(LIVE))).status).toBe(402);
    jumpClock(16 * MIN); // past the ordinary 15-minute lease; the job (default job_timeout_seconds 1800) may still run
    const c = await postJson(`${gw.baseURL}/videos`, body, auth(LIVE));
    expect(c.status).toBe(402);
    expect(c.json.error.details).toMatchObject({ spent_usd: "0", reserved_usd: "0.4" });
    vi.restoreAllMocks();
    jumpClock(40 * MIN); // past the job timeout, within its margin for the record's write
    expect((await postJson(`${gw.baseURL}/videos`, body, auth(LIVE))).status).toBe(402);
    const records = await videoRecords(gw, 1);
    await new Promise((r) => setTimeout(r, 300)); // nothing else is billed
    expect((await videoRecords(gw, 1)).map((e) => e.costUsd)).toEqual(["0.4"]);
    expect(records[0]!.requestId).toBe(a.headers.get("x-request-id"));
  });

  it("is still a lease: bounded by the model's job_timeout_seconds + 15 minutes", async () => {
    gw = await startTestGateway(config({ kind: "sqlite", path: join(dir, `b-${ulid()}.db`) }, 60));
    expect((await postJson(`${gw.baseURL}/videos`, body, auth(LIVE))).status).toBe(504);
    jumpClock(15 * MIN + 30_000); // within 1 min + 15 min
    expect((await postJson(`${gw.baseURL}/videos`, body, auth(LIVE))).status).toBe(402);
    vi.restoreAllMocks();
    // As if the job's process had died with the hold: after 1 min + 15 min nothing holds it any more.
    jumpClock(16 * MIN + 30_000);
    expect((await postJson(`${gw.baseURL}/videos`, body, auth(LIVE))).status).toBe(504);
  });

  it("on Redis: the hold's lease covers the job timeout, and a later short lease does not cut the key's expiry", async () => {
    redis = await startRedis();
    const prefix = `mg-${ulid()}:`;
    gw = await startTestGateway(config({ kind: "redis", url: redis.url, prefix }));
    const r = new Redis(redis.url);
    try {
      const a = await postJson(`${gw.baseURL}/videos`, body, auth(LIVE));
      expect(a.status).toBe(504);
      const genId = a.headers.get("x-mg-generation-id")!;
      const [resv] = await r.keys(`${prefix}resv:*`);
      expect(resv).toBeDefined();
      const [sec] = await r.time();
      const [, , expires] = /^(\d+):(\d+)$/.exec((await r.hget(resv!, genId))!)!;
      // Held at least as long as the job may run (30 min), not the ordinary 15 minutes.
      expect(Number(expires) - Number(sec) * 1000).toBeGreaterThan(30 * MIN);
      // An ordinary request reserves (15-minute lease) in the same hash meanwhile.
      await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, auth(LIVE));
      expect(await r.pttl(resv!)).toBeGreaterThan(30 * MIN);
      expect((await postJson(`${gw.baseURL}/videos`, body, auth(LIVE))).status).toBe(402);
      expect((await videoRecords(gw, 1)).map((e) => e.costUsd)).toEqual(["0.4"]);
    } finally {
      r.disconnect();
    }
  });
});
