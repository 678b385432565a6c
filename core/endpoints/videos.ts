// POST /api/v1/videos: validates against the spec and the model's limits, starts (or attaches to) a video job
// and holds the connection until the final asset, served from a gateway-signed URL valid about 24 hours.
// Idempotency (x-mg-idempotency-key or Idempotency-Key): a repeat attaches to the same job — also while it is
// still running — and after completion returns the original asset with a refreshed URL. The job bills itself, once,
// to the request that started it (video-jobs.ts); no answer here carries a bill.
import { setTimeout as sleep } from "node:timers/promises";
import { ulid } from "ulid";
import { validateVideos } from "../generated/validators.js";
import { GatewayError, clientClosed } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";
import type { VideosCall } from "../contracts/media.ts";
import { estimateTokens } from "../metering/estimate-tokens.ts";
import { assetsOf, signAsset, VIDEO_URL_TTL_S } from "../assets/index.ts";
import { extraFields, limitsOf, requireType, echoTraceId } from "./media.ts";
import { UPSTREAM_MODEL_HEADER } from "../dispatch.ts";
import { stillRunning, videoJobsOf, type JobClaim, type VideoAsset, type VideoJob } from "./video-jobs.ts";
import { clampDuration } from "./video-duration.ts";
import { videoFingerprint } from "./video-key.ts";
import { sharedJobId } from "./video-job-id.ts";
import { videoJobTimeoutMs } from "./video-job-timeout.ts";
import { idempotencyKey, idempotencyKeyAsSent, idempotencyScope } from "../http/idempotency-key.ts";

const KNOWN = ["model", "prompt", "image_url", "last_frame_url", "aspect_ratio", "duration", "user", "providerOptions"] as const;
/** Spec, Limits: video requests hold the connection up to 600 seconds. */
export const VIDEO_HOLD_MS = 600_000;

const bad = (message: string, field: string, extra: Record<string, unknown> = {}) =>
  new GatewayError(400, "BAD_REQUEST", message, { details: { field, ...extra } });

const NAMED_RATIOS: [string, number][] = [["16:9", 16 / 9], ["9:16", 9 / 16], ["1:1", 1], ["4:3", 4 / 3], ["3:4", 3 / 4], ["21:9", 21 / 9]];

/** limits.aspect_ratios, else the nearest named ratio of each of limits.sizes (WIDTHxHEIGHT), else undefined. */
export function aspectRatios(limits: Record<string, any>): string[] | undefined {
  if (Array.isArray(limits.aspect_ratios)) return limits.aspect_ratios;
  if (!Array.isArray(limits.sizes)) return undefined;
  const out = new Set<string>();
  for (const s of limits.sizes) {
    const m = /^(\d+)x(\d+)$/.exec(String(s));
    if (!m) continue;
    const r = Number(m[1]) / Number(m[2]);
    out.add(NAMED_RATIOS.reduce((best, cur) => (Math.abs(Math.log(cur[1] / r)) < Math.abs(Math.log(best[1] / r)) ? cur : best))[0]);
  }
  return out.size ? [...out] : undefined;
}

function checkLimits(ctx: GatewayContext): void {
  const body = ctx.body;
  const model = ctx.model!;
  const limits = limitsOf(model);
  const ratios = aspectRatios(limits);
  if (body.aspect_ratio && ratios && !ratios.includes(body.aspect_ratio)) {
    throw bad(`aspect_ratio ${body.aspect_ratio} is not supported by ${model.id} (supported: ${ratios.join(", ")})`, "aspect_ratio", { supported: ratios });
  }
  if (body.image_url && limits.image_input === false) throw bad(`${model.id} does not take an image_url (image-to-video)`, "image_url");
  if (body.last_frame_url && limits.last_frame !== true) throw bad(`${model.id} does not take a last_frame_url`, "last_frame_url");
}

function seconds(limits: Record<string, any>, key: string, fallbackMs: number): number {
  return typeof limits[key] === "number" && limits[key] > 0 ? limits[key] * 1000 : fallbackMs;
}

async function videos(ctx: GatewayContext): Promise<void> {
  echoTraceId(ctx);
  const body = ctx.body;
  const model = ctx.model!;
  requireType(model, "video", 400, "BAD_REQUEST");
  checkLimits(ctx);
  const limits = limitsOf(model);
  const duration = clampDuration(model, body.duration);
  const key = idempotencyKey(ctx);
  const projectId = ctx.auth?.projectId ?? "";
  const sandbox = ctx.auth?.sandbox === true;
  const fingerprint = videoFingerprint(model, body, sandbox);
  const jobs = videoJobsOf(ctx.gateway);

  let job = key ? jobs.find(projectId, key, sandbox) : undefined;
  if (job && job.fingerprint !== fingerprint) throw keyReused(ctx);
  let claim: JobClaim | undefined;
  if (!job && key) {
    // Not running here: a finished job may be on record (earlier process, another replica), or another replica
    // may be running it right now.
    const owner = `${ctx.requestId}:${ulid()}`;
    const scope = idempotencyScope(projectId, "videos", key, sandbox);
    const found = await claimOrFind(ctx, scope, fingerprint, owner, {
      leaseMs: videoJobTimeoutMs(model),
      holdMs: seconds(limits, "timeout_seconds", VIDEO_HOLD_MS),
      local: () => jobs.find(projectId, key, sandbox),
    });
    if (found.kind === "done") return respond(ctx, found.asset);
    if (found.kind === "local") job = found.job;
    else claim = { scope, owner };
  }
  if (!job) {
    const max = typeof limits.max_concurrent_jobs === "number" ? limits.max_concurrent_jobs : 1;
    if (jobs.runningCount(projectId, model.id, sandbox) >= max) {
      if (claim) await ctx.gateway.store.idempotencyRelease(claim.scope, claim.owner).catch(() => {});
      throw new GatewayError(429, "RATE_LIMITED", `${model.id} runs ${max} video job${max === 1 ? "" : "s"} at a time per project; wait for the running one to finish`, {
        retryAfter: 30, details: { model: model.id, max_concurrent_jobs: max },
      });
    }
    // The budget reserved nothing because the key was taken (video-key.ts); a new job is started after all: reserve now.
    if (ctx.reserveSkipped) {
      try {
        await ctx.reserveSkipped();
      } catch (err) {
        if (claim) await ctx.gateway.store.idempotencyRelease(claim.scope, claim.owner).catch(() => {});
        throw err;
      }
    }
    const call: VideosCall = {
      prompt: body.prompt,
      imageUrl: body.image_url,
      lastFrameUrl: body.last_frame_url,
      urlFetch: ctx.config.server.urlFetch,
      aspectRatio: body.aspect_ratio,
      duration,
      user: body.user,
      providerOptions: body.providerOptions,
      extra: extraFields(body, KNOWN),
      poll: { initialMs: limits.poll_initial_ms ?? 5000, maxMs: limits.poll_max_ms ?? 15000 },
    };
    job = jobs.start(ctx, call, {
      key, fingerprint, claim,
      jobTimeoutMs: videoJobTimeoutMs(model),
      callTimeoutMs: ctx.config.server.upstreamTimeoutMs,
    });
    // The job's ledger record is this request's, written when the job ends (a 504 meanwhile names it too).
    ctx.responseHeaders["x-mg-generation-id"] = ctx.generationId;
  } else {
    ctx.responseHeaders["x-mg-video-job"] = "attached";
  }

  const result = await jobs.hold(job, ctx.signal, seconds(limits, "timeout_seconds", VIDEO_HOLD_MS), idempotencyKeyAsSent(ctx));
  return respond(ctx, result);
}

/**
 * The public result with a freshly signed URL. The job's own record bills it (video-jobs.ts); the request that
 * started the job shows that record's cost, any other names it (x-mg-generation-id) and is marked attached.
 */
async function respond(ctx: GatewayContext, result: VideoAsset): Promise<void> {
  const body = ctx.body;
  ctx.resolvedProvider = result.resolvedProvider;
  if (result.upstreamModel) ctx.responseHeaders[UPSTREAM_MODEL_HEADER] = result.upstreamModel;
  const inputTokens = result.inputTokens || estimateTokens(body.prompt);
  const outputSeconds = Math.ceil(result.duration);
  if (result.generationId === ctx.generationId) {
    // Usage without attempts: rate-limit windows and logs see it, the request's meter records nothing.
    ctx.usage = { inputTokens, outputTokens: 0, videoSeconds: outputSeconds };
    if (result.costUsd !== undefined) ctx.responseHeaders["x-mg-cost-usd"] = result.costUsd;
  } else {
    ctx.responseHeaders["x-mg-video-job"] = "attached";
    if (result.generationId) ctx.responseHeaders["x-mg-generation-id"] = result.generationId;
  }
  const signed = await signAsset(ctx, result.asset, VIDEO_URL_TTL_S);
  ctx.response = {
    kind: "json",
    status: 200,
    body: {
      id: result.id,
      created: result.created,
      model: result.model,
      data: [{ url: signed.url, expires_at: signed.expiresAt, duration: result.duration, size: result.size }],
      usage: { input_tokens: inputTokens, output_seconds: outputSeconds },
      providerMetadata: { gateway: { generationId: result.generationId ?? ctx.generationId, resolvedProvider: result.resolvedProvider, upstreamModel: result.upstreamModel, modelAttempts: result.attempts } },
    },
  };
}

function keyReused(ctx: GatewayContext): GatewayError {
  // Same answer as the idempotency plugin gives on other endpoints.
  return new GatewayError(422, "INVALID_REQUEST", "This idempotency key was already used with a different request body; use a new key for a new request", {
    details: { field: ctx.headers["idempotency-key"] !== undefined ? "Idempotency-Key" : "x-mg-idempotency-key", reason: "key_reused_with_different_body" },
  });
}

/**
 * Claim the key in gateway.store, or find the finished job on record. While another process holds the claim
 * (a replica running the job), wait for its record up to the hold time.
 */
async function claimOrFind(
  ctx: GatewayContext, scope: string, fingerprint: string, owner: string,
  o: { leaseMs: number; holdMs: number; local: () => VideoJob | undefined },
): Promise<{ kind: "new" } | { kind: "done"; asset: VideoAsset } | { kind: "local"; job: VideoJob }> {
  const store = ctx.gateway.store;
  const deadline = Date.now() + o.holdMs;
  for (let wait = 50; ; wait = Math.min(wait * 2, 5000)) {
    const state = await store.idempotencyBegin(scope, fingerprint, owner, o.leaseMs, Date.now());
    if (state.state === "new") return { kind: "new" };
    if (state.state === "mismatch") throw keyReused(ctx);
    if (state.state === "done" && state.response.kind === "json") {
      const asset = state.response.body as VideoAsset;
      if (await assetsOf(ctx.gateway).store.meta(asset.asset.name)) return { kind: "done", asset };
      // The file is not kept here (another assets_dir): run the job again, unrecorded.
      return { kind: "new" };
    }
    // "pending": a request in this process may have registered the job meanwhile.
    const job = o.local();
    if (job) {
      if (job.fingerprint !== fingerprint) throw keyReused(ctx);
      return { kind: "local", job };
    }
    if (Date.now() + wait > deadline) throw stillRunning(o.holdMs, await sharedJobId(ctx, scope), idempotencyKeyAsSent(ctx), true);
    try {
      await sleep(wait, undefined, { signal: ctx.signal });
    } catch {
      throw clientClosed();
    }
  }
}

export const videosEndpoint: EndpointSpec = {
  kind: "videos",
  method: "POST",
  route: "/api/v1/videos",
  protocol: "openai",
  validate: validateVideos,
  invalidCode: "BAD_REQUEST",
  terminal: videos,
  openapi: { summary: "Generate a video (long-running; the connection is held until the asset is ready)", requestSchema: "VideoGenerationRequest", responseSchema: "VideoResult", headers: ["x-mg-trace-id"], responseHeaders: ["x-mg-trace-id"], tag: "Inference" },
};
