// Two gateways on one redis-server and one assets_dir (replicas A and B), keyed video jobs:
// - a job finishing while Redis is paused: its record was tried once and lost, the key stayed claimed, B answered 504
//   until job_timeout_seconds and then ran (and billed) a second job, each replica serving its own video for the key;
// - a client that got 504 repeats with the same key (as docs/media.md tells it): the budget reserved a whole new
//   video's worst case for a request that only collects, so a full budget answered 402 for a video already paid for;
// - B giving up on A's job: its 504 names the job and the key, and the limit as configured (0.5 s, not "1 s").
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { startRedis, type TestRedis } from "./helpers/redis.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-video-replicas-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** sim/reel: made in `videoMs`, the connection held `holdS`; the worst case of a 4 s video is $0.80. */
function config(prefix: string, replica: string, o: { videoMs: number; holdS: number; jobTimeoutS?: number; budgetUsd?: string }) {
  const cfg: any = mediaConfig({
    server: { assets_dir: join(dir, `assets-${prefix}`), signing_secret: "one-secret-for-both-replicas" },
    sim: { video_ms: o.videoMs },
    models: {
      "sim/reel": {
        type: "video",
        limits: { durations: [4], timeout_seconds: o.holdS, max_concurrent_jobs: 2, ...(o.jobTimeoutS ? { job_timeout_seconds: o.jobTimeoutS } : {}) },
        endpoints: [{ provider: "sim", model: "reel", pricing: { video_second: "0.2" } }],
      },
    },
  });
  if (o.budgetUsd) cfg.projects.media.budget = { usd: o.budgetUsd, period: "total" };
  cfg.store = { kind: "redis", url: redis.url, prefix, spool_dir: join(dir, `spool-${prefix}-${replica}`) };
  return cfg;
}

let redis: TestRedis;
let running: TestGateway[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  redis.resume();
  await Promise.all(running.map((g) => g.close()));
  running = [];
});
afterAll(async () => {
  await redis?.stop();
});

async function replicas(o: Parameters<typeof config>[2]): Promise<[TestGateway, TestGateway]> {
  const prefix = `mg-${ulid()}:`;
  const [a, b] = await Promise.all([startTestGateway(config(prefix, "a", o)), startTestGateway(config(prefix, "b", o))]);
  running.push(a, b);
  return [a, b];
}

const videoRecords = async (g: TestGateway) => (await g.gateway.store.ledger({})).filter((e) => e.endpoint === "videos");

async function until<T>(f: () => Promise<T | undefined>, ms: number): Promise<T | undefined> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
  }
  return undefined;
}

describe("keyed video jobs on two replicas sharing Redis", () => {
  it("a job that finishes while Redis is paused is recorded once Redis is back: B delivers A's video, nothing billed twice", async () => {
    const [a, b] = await replicas({ videoMs: 1500, holdS: 5, jobTimeoutS: 30 });
    const headers = { ...auth(LIVE), "idempotency-key": `outage-${ulid()}` };
    const body = { model: "sim/reel", prompt: "finished during an outage", duration: 4 };
    const first = postJson(`${a.baseURL}/videos`, body, headers);
    await sleep(900);
    redis.pause(); // the job ends (billed, spooled) while its record cannot be written
    await sleep(2500);
    redis.resume();
    expect((await first).status).toBe(200); // served from memory on A
    const id = (await first).json.id;
    // Back for B (its readiness), the record lands within a few retries; B attaches to A's video, not a new job.
    await until(async () => ((await fetch(`${b.url}/readyz`)).status === 200 ? true : undefined), 10_000);
    const fromB = await postJson(`${b.baseURL}/videos`, body, headers);
    expect(fromB.status, fromB.text).toBe(200);
    expect(fromB.headers.get("x-mg-video-job")).toBe("attached");
    expect(fromB.json.id).toBe(id);
    const fromA = await postJson(`${a.baseURL}/videos`, body, headers);
    expect(fromA.json.id).toBe(id);
    // One bill (the spooled record reaches the ledger once Redis is back).
    const records = await until(async () => {
      const r = await videoRecords(a);
      return r.length ? r : undefined;
    }, 10_000);
    await sleep(300);
    expect((await videoRecords(a)).map((e) => e.costUsd)).toEqual(["0.8"]);
    expect(records![0]!.requestId).toBe((await first).headers.get("x-request-id"));
  }, 60_000);

  it("a repeat after a 504 collects the video it paid for on a budget with room for one: no 402, on either replica", async () => {
    const [a, b] = await replicas({ videoMs: 1500, holdS: 0.5, budgetUsd: "1" });
    const headers = { ...auth(LIVE), "idempotency-key": `collect-${ulid()}` };
    const body = { model: "sim/reel", prompt: "paid for once", duration: 4 };
    const first = await postJson(`${a.baseURL}/videos`, body, headers);
    expect(first.status).toBe(504); // the job runs on with the $0.80 hold
    // While it runs: attaching reserves nothing, so the $0.20 left is no reason to refuse.
    const whileRunning = await postJson(`${a.baseURL}/videos`, body, headers);
    expect(whileRunning.status, whileRunning.text).toBe(504);
    expect(whileRunning.headers.get("x-mg-video-job")).toBe("attached");
    await until(async () => ((await videoRecords(a)).length ? true : undefined), 10_000);
    for (const g of [a, b]) {
      const r = await postJson(`${g.baseURL}/videos`, body, headers);
      expect(r.status, r.text).toBe(200);
      expect(r.json.id).toBe(first.json.error.details.job_id);
    }
    expect((await videoRecords(a)).map((e) => e.costUsd)).toEqual(["0.8"]);
    // A new video still reserves its worst case: $0.80 does not fit in the $0.20 left.
    const another = await postJson(`${b.baseURL}/videos`, { ...body, prompt: "a second one" }, { ...auth(LIVE), "idempotency-key": `new-${ulid()}` });
    expect(another.status).toBe(402);
  }, 60_000);

  it("a taken key that turns out to need a new job (its claim lapsed) has that job reserved first: 402 with no room", async () => {
    const [a, b] = await replicas({ videoMs: 1500, holdS: 0.5, budgetUsd: "1" });
    const paid = { ...auth(LIVE), "idempotency-key": `paid-${ulid()}` };
    // Spend $0.80 of the $1.
    expect((await postJson(`${a.baseURL}/videos`, { model: "sim/reel", prompt: "spends", duration: 4 }, paid)).status).toBe(504);
    await until(async () => ((await videoRecords(a)).length ? true : undefined), 10_000);
    // A key claimed by a job whose replica died (a claim nobody will complete, lapsing in 1 s): B waits for it, finds it
    // free and must start a job of its own, which is reserved first — no room, 402, and the claim is given back.
    const key = `lapsed-${ulid()}`;
    const body = { model: "sim/reel", prompt: "a new job after all", duration: 4 };
    const { idempotencyScope } = await import("../core/http/idempotency-key.ts");
    const { videoFingerprint } = await import("../core/endpoints/video-key.ts");
    const model = b.gateway.config.models.get("sim/reel")!;
    const scope = idempotencyScope("media", "videos", key, false);
    expect((await b.gateway.store.idempotencyBegin(scope, videoFingerprint(model, body, false), "dead-replica", 300, Date.now())).state).toBe("new");
    const r = await postJson(`${b.baseURL}/videos`, body, { ...auth(LIVE), "idempotency-key": key });
    expect(r.status, r.text).toBe(402);
    await sleep(2000);
    expect((await videoRecords(a)).map((e) => e.costUsd)).toEqual(["0.8"]);
  }, 60_000);

  it("B giving up on A's job answers 504 naming the job, the key and the limit as configured", async () => {
    const [a, b] = await replicas({ videoMs: 2000, holdS: 0.5 });
    const key = `timeout-${ulid()}`;
    const headers = { ...auth(LIVE), "idempotency-key": key };
    const body = { model: "sim/reel", prompt: "still running", duration: 4 };
    const first = await postJson(`${a.baseURL}/videos`, body, headers);
    expect(first.status).toBe(504);
    expect(first.json.error.details).toEqual({ job_id: expect.stringMatching(/^vid_/), limit_seconds: 0.5, idempotency_key: key });
    expect(first.json.error.message).toContain("after 0.5 s");
    const fromB = await postJson(`${b.baseURL}/videos`, body, headers);
    expect(fromB.status).toBe(504);
    expect(fromB.json.error.details).toEqual({ job_id: first.json.error.details.job_id, limit_seconds: 0.5, idempotency_key: key });
    expect(fromB.json.error.message).toContain("after 0.5 s");
  }, 60_000);
});
