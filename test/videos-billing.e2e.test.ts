// A video job is billed once, when it ends, to the request that started it — also when that request got 504 or its
// client left, and also when the asset is delivered by a later gateway process on the same SQLite store (a
// restart). No request that collects the asset is billed again.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { videoJobsOf } from "../core/endpoints/video-jobs.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-video-billing-"));
// Held 0.3 s, made in 1.2 s: every request below gives up (504) or leaves before its video is ready.
const config = () => ({
  ...mediaConfig({
    server: { assets_dir: join(dir, "assets") },
    sim: { video_ms: 1200 },
    models: {
      "sim/slow-reel": {
        type: "video", limits: { durations: [2, 4], timeout_seconds: 0.3, max_concurrent_jobs: 2 },
        endpoints: [{ provider: "sim", model: "reel", pricing: { video_second: "0.1" } }],
      },
      // Held longer than the job may run (0.4 s): the job's own time limit ends it.
      "sim/stuck-reel": {
        type: "video", limits: { durations: [2], timeout_seconds: 5, job_timeout_seconds: 0.4, max_concurrent_jobs: 2 },
        endpoints: [{ provider: "sim", model: "reel", pricing: { video_second: "0.1" } }],
      },
    },
  }),
  store: { kind: "sqlite", path: join(dir, "gateway.db") },
});
let gw: TestGateway | undefined;
afterAll(async () => {
  await gw?.close();
});

const videoRecords = async (g: TestGateway) => (await g.gateway.store.ledger({})).filter((e) => e.endpoint === "videos");

/** The video records once `n` are there (the job ends after its request), or whatever is there after 5 s. */
async function waitForRecords(g: TestGateway, n: number) {
  const until = Date.now() + 5000;
  for (;;) {
    const records = await videoRecords(g);
    if (records.length >= n || Date.now() > until) return records;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until project media's live job on `model` is running: a fixed pause let a loaded machine act before the
 * request had reached the gateway. */
async function jobRunning(g: TestGateway, model: string) {
  const jobs = videoJobsOf(g.gateway);
  for (const end = Date.now() + 10_000; jobs.runningCount("media", model, false) === 0; await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > end) throw new Error(`no live job on ${model} started in 10 s`);
  }
}

describe("video billing", () => {
  it("a keyed job whose request got 504 is billed when it ends; its delivery after a restart bills nothing more", async () => {
    const key = ulid();
    const body = { model: "sim/slow-reel", prompt: "billed across a restart", duration: 2 };
    const headers = { ...auth(LIVE), "x-mg-idempotency-key": key };
    gw = await startTestGateway(config());
    const first = await postJson(`${gw.baseURL}/videos`, body, headers);
    expect(first.status).toBe(504);
    // The job finishes after the 504 and is on record in the store before this process stops.
    const billed = await waitForRecords(gw, 1);
    expect(billed).toHaveLength(1);
    expect(billed[0]).toMatchObject({ requestId: first.headers.get("x-request-id"), videoSeconds: 2, costUsd: "0.2", status: 200, outcome: "ok" });
    await gw.close();

    gw = await startTestGateway(config()); // the same SQLite file and assets_dir
    const again = await postJson(`${gw.baseURL}/videos`, body, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("x-mg-video-job")).toBe("attached");
    expect(again.json.id).toBe(first.json.error.details.job_id);
    expect(again.headers.get("x-mg-generation-id")).toBe(billed[0]!.generationId); // names the record that billed it
    await new Promise((r) => setTimeout(r, 200));
    const after = await videoRecords(gw);
    expect(after).toHaveLength(1); // $0.20, once
    expect(after[0]!.generationId).toBe(billed[0]!.generationId);
  });

  it("a job without a key whose client left runs on and is billed to the request that started it", async () => {
    gw ??= await startTestGateway(config());
    const before = (await videoRecords(gw)).length;
    const controller = new AbortController();
    const left = fetch(`${gw.baseURL}/videos`, {
      method: "POST", signal: controller.signal,
      headers: { "content-type": "application/json", ...auth(LIVE) },
      body: JSON.stringify({ model: "sim/slow-reel", prompt: "nobody waits", duration: 4 }),
    }).catch((e) => e);
    await jobRunning(gw, "sim/slow-reel"); // then it leaves, well within the 0.3 s hold
    controller.abort();
    expect(await left).toBeInstanceOf(Error);
    // The upstream job cannot be cancelled: it is billed when it ends, as generated.
    const records = await waitForRecords(gw, before + 1);
    expect(records).toHaveLength(before + 1);
    expect(records.find((e) => e.videoSeconds === 4)).toMatchObject({ videoSeconds: 4, costUsd: "0.4", status: 200 });
  });

  // The job's time limit aborted its upstream call as if a client had left: the record was written before that
  // attempt (as 499 CANCELLED) was, so the job left none at all.
  it("a job past job_timeout_seconds is recorded as that timeout, at no cost", async () => {
    gw ??= await startTestGateway(config());
    const r = await postJson(`${gw.baseURL}/videos`, { model: "sim/stuck-reel", prompt: "never done", duration: 2 }, auth(LIVE));
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe("UPSTREAM_TIMEOUT");
    expect(r.json.error.message).toMatch(/^Video job vid_\w+ on sim\/stuck-reel did not finish within 0\.4 s$/);
    expect(await ledgerRecordOf(gw, r.headers.get("x-request-id"))).toMatchObject({
      model: "sim/stuck-reel", status: 504, outcome: "error", costUsd: "0", videoSeconds: 0,
      attemptList: [{ model: "sim/stuck-reel", provider: "sim", status: 504, error: "UPSTREAM_TIMEOUT" }],
    });
  });
});
