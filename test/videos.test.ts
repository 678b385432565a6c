// Video generation: validation and clamping, the held connection, signed 24 h URLs, idempotent attach (while
// running, after completion, after a disconnect) without a second upstream job, one job per model per project,
// hold timeouts, and the OpenAI (Sora) create/poll/download protocol.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ulid } from "ulid";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig, OTHER, SANDBOX } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { videoJobsOf } from "../core/endpoints/video-jobs.ts";

let up: FakeOpenAIMedia;
let gw: TestGateway;
beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  gw = await startTestGateway(mediaConfig({
    providers: {
      openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY },
      slowsim: { protocol: "sim", sim: { video_ms: 1500 } },
    },
    models: {
      "openai/sora-2": {
        type: "video", limits: { durations: [4, 8, 12], aspect_ratios: ["16:9", "9:16"], max_concurrent_jobs: 1, poll_initial_ms: 5, poll_max_ms: 20 },
        endpoints: [{ provider: "openai", model: "sora-2", pricing: { video_second: "0.1" } }],
      },
      "slow/reel": { type: "video", limits: { timeout_seconds: 0.4, max_concurrent_jobs: 2 }, endpoints: [{ provider: "slowsim", model: "reel" }] },
      "slow/solo": { type: "video", limits: { max_concurrent_jobs: 1 }, endpoints: [{ provider: "slowsim", model: "solo" }] },
    },
  }));
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
  up.failures.length = 0;
  up.videoPolls = 2;
  up.videoFailure = undefined;
});

const key = () => ulid();
const post = (body: unknown, k = SANDBOX, headers: Record<string, string> = {}) => postJson(`${gw.baseURL}/videos`, body, { ...auth(k), ...headers });
const assetName = (url: string) => new URL(url).pathname;
/** Waits until project media's job on `model` holds its slot: a fixed pause let a loaded machine send the next
 * request before the first had reached the gateway, and the next took the slot. */
async function jobRunning(model: string, sandbox: boolean): Promise<void> {
  const jobs = videoJobsOf(gw.gateway);
  for (const end = Date.now() + 10_000; jobs.runningCount("media", model, sandbox) === 0; await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > end) throw new Error(`no ${sandbox ? "sandbox" : "live"} job on ${model} started in 10 s`);
  }
}
/** Waits until project media has a job under idempotency key `k`, running or already done (a short job can end
 * between two looks at the slot): a fixed pause let a loaded machine send the next step before the job started. */
async function jobStarted(k: string, sandbox: boolean): Promise<void> {
  const jobs = videoJobsOf(gw.gateway);
  // The gateway files a ULID key lower-cased (core/http/idempotency-key.ts).
  for (const end = Date.now() + 10_000; !jobs.find("media", k.toLowerCase(), sandbox); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() > end) throw new Error(`no ${sandbox ? "sandbox" : "live"} job under key ${k} started in 10 s`);
  }
}

describe("videos on the simulator", () => {
  it("holds the connection until a real MP4 is ready and returns the spec's result", async () => {
    const r = await post({ model: "sim/reel", prompt: "waves on a beach", duration: 3, aspect_ratio: "16:9" });
    expect(r.status).toBe(200);
    expect(r.json.id).toMatch(/^vid_/);
    expect(r.json.model).toBe("sim/reel");
    expect(r.json.created).toBeGreaterThan(1.7e9);
    const d = r.json.data[0];
    expect(d.duration).toBe(4); // 3 s clamped up to the model's next supported length
    expect(d.size).toBe("128x72");
    expect(d.expires_at - Date.now() / 1000).toBeGreaterThan(24 * 3600 - 60);
    expect(d.expires_at - Date.now() / 1000).toBeLessThanOrEqual(24 * 3600);
    expect(Number(new URL(d.url).searchParams.get("expires"))).toBe(d.expires_at);
    expect(r.json.usage).toEqual({ input_tokens: expect.any(Number), output_seconds: 4 });
    const file = await fetch(d.url);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.subarray(4, 8).toString()).toBe("ftyp");
    expect(bytes.includes(Buffer.from("avcC"))).toBe(true);
  });

  it("clamps duration to the model's range and picks sizes by aspect ratio", async () => {
    const long = await post({ model: "sim/reel", prompt: "x", duration: 60, aspect_ratio: "9:16" });
    expect(long.json.data[0]).toMatchObject({ duration: 4, size: "72x128" });
    const short = await post({ model: "sim/reel", prompt: "x", duration: 1, aspect_ratio: "1:1" });
    expect(short.json.data[0]).toMatchObject({ duration: 2, size: "96x96" });
  });

  it("validates every field with 400 BAD_REQUEST naming it", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ prompt: "" }, "prompt"],
      [{ prompt: "p".repeat(8001) }, "prompt"],
      [{ image_url: "http://example.com/a.png" }, "image_url"],
      [{ image_url: "not a url" }, "image_url"],
      [{ last_frame_url: "http://example.com/b.png" }, "last_frame_url"],
      [{ aspect_ratio: "5:4" }, "aspect_ratio"],
      [{ aspect_ratio: "21:9" }, "aspect_ratio"], // a valid ratio the model does not support
      [{ duration: 0 }, "duration"],
      [{ duration: 61 }, "duration"],
      [{ user: "u".repeat(257) }, "user"],
    ];
    for (const [extra, field] of cases) {
      const r = await post({ model: "sim/reel", prompt: "ok", ...extra });
      expect(r.status, JSON.stringify(extra).slice(0, 60)).toBe(400);
      expect(r.json.error.code).toBe("BAD_REQUEST");
      expect(r.json.error.details.field).toBe(field);
    }
    expect((await post({ model: "sim/pixel", prompt: "x" })).json.error.code).toBe("BAD_REQUEST");
    expect((await post({ model: "openai/sora-2", prompt: "x", last_frame_url: "https://e.com/x.png" })).status).toBe(400);
    const ok = await post({ model: "sim/reel", prompt: "ok", image_url: "https://example.com/a.png", last_frame_url: "https://example.com/b.png", duration: 2 });
    expect(ok.status).toBe(200);
  });

  it("a repeat with the same key attaches while running and gets the original asset afterwards", async () => {
    const k = key();
    const [a, b] = await Promise.all([
      post({ model: "sim/reel", prompt: "a fox", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": k }),
      jobStarted(k, true).then(() => post({ model: "sim/reel", prompt: "a fox", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": k })),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.json.id).toBe(a.json.id);
    expect(b.headers.get("x-mg-video-job")).toBe("attached");
    expect(assetName(b.json.data[0].url)).toBe(assetName(a.json.data[0].url));
    await new Promise((r) => setTimeout(r, 1100));
    const later = await post({ model: "sim/reel", prompt: "a fox", duration: 2 }, SANDBOX, { "idempotency-key": k });
    expect(later.json.id).toBe(a.json.id);
    expect(assetName(later.json.data[0].url)).toBe(assetName(a.json.data[0].url));
    expect(later.json.data[0].expires_at).toBeGreaterThan(a.json.data[0].expires_at);
    expect(later.json.data[0].url).not.toBe(a.json.data[0].url);
    expect((await fetch(later.json.data[0].url)).status).toBe(200);
  });

  it("a key reused for a different request is 422 INVALID_REQUEST; a malformed key is 400 BAD_REQUEST", async () => {
    const k = key();
    expect((await post({ model: "sim/reel", prompt: "one", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": k })).status).toBe(200);
    const r = await post({ model: "sim/reel", prompt: "two", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": k });
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "INVALID_REQUEST", details: { reason: "key_reused_with_different_body" } });
    const malformed = await post({ model: "sim/reel", prompt: "one", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": "not-a-ulid" });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe("BAD_REQUEST");
  });

  it("one running job per model per project: a second is 429 RATE_LIMITED with Retry-After", async () => {
    // On the slow simulator (1.5 s a job): sim/reel's 200 ms job could end before a loaded machine sent the second.
    const first = post({ model: "slow/solo", prompt: "first", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": key() });
    await jobRunning("slow/solo", true);
    const second = await post({ model: "slow/solo", prompt: "second", duration: 2 }, SANDBOX, { "x-mg-idempotency-key": key() });
    expect(second.status).toBe(429);
    expect(second.json.error.code).toBe("RATE_LIMITED");
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    // another project is not affected
    const other = await post({ model: "slow/solo", prompt: "other project", duration: 2 }, OTHER);
    expect(other.status).toBe(200);
    expect((await first).status).toBe(200);
  });

  it("a project's sandbox jobs have a slot of their own: they never hold the one its live keys' jobs need", async () => {
    // The sandbox key's job (1.5 s on the slow simulator) is running...
    const sandboxJob = post({ model: "slow/solo", prompt: "sandbox holds a slot", duration: 2 }, SANDBOX);
    await jobRunning("slow/solo", true);
    // ...and the live key's job still starts.
    const liveJob = post({ model: "slow/solo", prompt: "live job", duration: 2 }, LIVE);
    await jobRunning("slow/solo", false);
    // Each kind is still one job at a time in its own slot.
    const secondSandbox = await post({ model: "slow/solo", prompt: "second sandbox", duration: 2 }, SANDBOX);
    expect(secondSandbox.status).toBe(429);
    expect(secondSandbox.json.error.code).toBe("RATE_LIMITED");
    const secondLive = await post({ model: "slow/solo", prompt: "second live", duration: 2 }, LIVE);
    expect(secondLive.status).toBe(429);
    const [s, l] = await Promise.all([sandboxJob, liveJob]);
    expect(s.status, s.text).toBe(200);
    expect(l.status, l.text).toBe(200);
  });

  it("a sandbox key's idempotency key is its own: a live key sending the same key and body runs its own job", async () => {
    const k = key();
    const body = { model: "sim/reel", prompt: "one key, two kinds of keys", duration: 2 };
    const sandbox = await post(body, SANDBOX, { "x-mg-idempotency-key": k });
    expect(sandbox.status, sandbox.text).toBe(200);
    // Before, the live request found the sandbox job's record and was refused as the key reused (422).
    const live = await post(body, LIVE, { "x-mg-idempotency-key": k });
    expect(live.status, live.text).toBe(200);
    expect(live.json.id).not.toBe(sandbox.json.id);
    expect(live.headers.get("x-mg-video-job")).toBeNull();
    // Each kind still replays its own job.
    const again = await post(body, SANDBOX, { "x-mg-idempotency-key": k });
    expect(again.json.id).toBe(sandbox.json.id);
    const liveAgain = await post(body, LIVE, { "x-mg-idempotency-key": k });
    expect(liveAgain.json.id).toBe(live.json.id);
  });

  it("past the hold time: 504 UPSTREAM_TIMEOUT, and the job keeps running for a repeat with the same key", async () => {
    const k = key();
    const r = await post({ model: "slow/reel", prompt: "slow", duration: 2 }, LIVE, { "x-mg-idempotency-key": k });
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe("UPSTREAM_TIMEOUT");
    expect(r.json.error.details.job_id).toMatch(/^vid_/);
    let again = await post({ model: "slow/reel", prompt: "slow", duration: 2 }, LIVE, { "x-mg-idempotency-key": k });
    for (let i = 0; i < 10 && again.status === 504; i++) again = await post({ model: "slow/reel", prompt: "slow", duration: 2 }, LIVE, { "x-mg-idempotency-key": k });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(r.json.error.details.job_id);
  });

  it("the 504 names the idempotency key as the client spelled it, not lower-cased", async () => {
    const k = key(); // a ULID in upper case
    const r = await post({ model: "slow/reel", prompt: "slow, named back", duration: 2 }, LIVE, { "x-mg-idempotency-key": k });
    expect(r.status).toBe(504);
    expect(r.json.error.details.idempotency_key).toBe(k);
  });

  it("a request sent without a key is told its video cannot be collected and a repeat bills a new one, and not to retry", async () => {
    const r = await post({ model: "slow/reel", prompt: "slow, no key", duration: 2 }, LIVE);
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe("UPSTREAM_TIMEOUT");
    expect(r.json.error.message).not.toContain("same idempotency key");
    expect(r.json.error.message).toContain("sent no idempotency key");
    expect(r.json.error.message).toContain("starts (and bills) a new one");
    expect(r.json.error.message).toContain("x-mg-idempotency-key");
    expect(r.json.error.details.idempotency_key).toBeUndefined();
    expect(r.headers.get("x-should-retry")).toBe("false"); // an SDK's automatic retry would pay for a second video
  });
});

describe("videos on an OpenAI-protocol (Sora) upstream", () => {
  it("creates, polls and downloads; duration and size come from the upstream job", async () => {
    const r = await post({ model: "openai/sora-2", prompt: "a drone shot", duration: 7, aspect_ratio: "16:9", image_url: "https://example.com/seed.png" }, LIVE);
    expect(r.status).toBe(200);
    const create = up.requests.find((q) => q.method === "POST")!;
    expect(create.path).toBe("/v1/videos");
    expect(create.body).toEqual({ model: "sora-2", prompt: "a drone shot", seconds: "8", size: "1280x720", input_reference: { image_url: "https://example.com/seed.png" } });
    expect(up.requests.filter((q) => q.method === "GET" && !q.path.includes("/content")).length).toBe(2);
    expect(up.requests.some((q) => q.path.endsWith("/content?variant=video"))).toBe(true);
    expect(r.json.data[0]).toMatchObject({ duration: 8, size: "1280x720" });
    expect(r.json.usage.output_seconds).toBe(8);
    expect(r.text).not.toContain(up.origin);
    const file = await fetch(r.json.data[0].url);
    expect(file.headers.get("content-type")).toBe("video/mp4");
  });

  it("a failed upstream job is 502 UPSTREAM_ERROR with the provider's reason", async () => {
    up.videoFailure = { code: "moderation_blocked", message: "Your request was blocked by our moderation system." };
    const r = await post({ model: "openai/sora-2", prompt: "x" }, LIVE);
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe("UPSTREAM_ERROR");
    expect(r.json.error.message).toContain("moderation system");
    // a failed job is not replayed: the same key may try again
  });

  it("attaching while running and after a client disconnect never creates a second upstream job", async () => {
    up.videoPolls = 30;
    const k = key();
    const before = up.videosCreated;
    const controller = new AbortController();
    const first = fetch(`${gw.baseURL}/videos`, {
      method: "POST", signal: controller.signal,
      headers: { "content-type": "application/json", ...auth(LIVE), "x-mg-idempotency-key": k },
      body: JSON.stringify({ model: "openai/sora-2", prompt: "reconnect" }),
    }).catch((e) => e);
    await jobStarted(k, false);
    controller.abort();
    expect(await first).toBeInstanceOf(Error);
    const again = await post({ model: "openai/sora-2", prompt: "reconnect" }, LIVE, { "x-mg-idempotency-key": k });
    expect(again.status).toBe(200);
    expect(again.headers.get("x-mg-video-job")).toBe("attached");
    expect(up.videosCreated - before).toBe(1);
    const third = await post({ model: "openai/sora-2", prompt: "reconnect" }, LIVE, { "x-mg-idempotency-key": k });
    expect(third.json.id).toBe(again.json.id);
    expect(up.videosCreated - before).toBe(1);
  });
});
