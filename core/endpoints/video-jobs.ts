// Video jobs outlive the HTTP request that started them. The registry keys jobs by project + idempotency key (a
// sandbox key's apart from the live keys') so a repeat (while running or after completion) attaches to the same
// job instead of starting a second upstream job, and counts running jobs per project + model for the
// one-job-at-a-time rule (a project's sandbox jobs, the simulator's, in a slot of their own: the published sandbox
// key cannot hold the slot the live keys' jobs need).
// Running jobs live in this process; keyed jobs are also claimed in gateway.store (the idempotency records), so a
// finished video survives a restart (sqlite) and replicas sharing a store (redis) attach to each other's jobs.
// A job bills itself when it ends, to the request that started it (see start()): no request that delivers the asset
// (or gave up waiting for it) carries the bill.
import { ulid } from "ulid";
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { GatewayContext, ModelAttempt } from "../pipeline/context.ts";
import { DO_NOT_RETRY, GatewayError, clientClosed, toGatewayError } from "../errors.ts";
import type { AssetMeta } from "../assets/store.ts";
import { keepAsset, VIDEO_URL_TTL_S } from "../assets/index.ts";
import { estimateTokens } from "../metering/estimate-tokens.ts";
import type { VideosCall, VideosOutput } from "../contracts/media.ts";
import { dispatchCall, withDeadline } from "./media.ts";
import { Meter } from "../metering/meter.ts";
import { costUsd } from "../observability/headers.ts";
import { recordJob } from "./video-record.ts";
import { shareJobId } from "./video-job-id.ts";

/** Idempotency window (spec, Limits): a finished job can be picked up again for 24 hours. */
const KEEP_FINISHED_MS = 24 * 3600_000;

/** Where a keyed job is recorded in gateway.store. */
export interface JobClaim { scope: string; owner: string }

export interface VideoAsset {
  id: string;
  created: number;
  /** The gateway id of the model that made it (a fallback's, when one served). */
  model: string;
  /** The upstream's own id for it. */
  upstreamModel?: string;
  asset: AssetMeta;
  duration: number;
  size: string;
  inputTokens: number;
  resolvedProvider?: string;
  attempts: ModelAttempt[];
  /** The ledger record that bills this video: the generation id of the request that started the job. */
  generationId?: string;
  /** What that record cost (x-mg-cost-usd on the starting request's answer). */
  costUsd?: string;
}

export interface VideoJob {
  id: string;
  projectId: string;
  modelId: string;
  key?: string;
  /** Hash of the request; a key reused for a different request is a conflict. */
  fingerprint: string;
  status: "running" | "succeeded" | "failed";
  promise: Promise<VideoAsset>;
  finishedAt?: number;
  controller: AbortController;
}

/** The one-job-at-a-time slot: per project and model, and for sandbox keys apart from the live keys'. */
function slotOf(projectId: string, modelId: string, sandbox: boolean): string {
  return `${projectId}\n${modelId}${sandbox ? "\nsandbox" : ""}`;
}

/** Where a job's idempotency key is found: per project, and for sandbox keys apart from the live keys' (as the
 * idempotency plugin keeps them), so the two never attach to, or conflict with, each other's jobs. */
function keyOf(projectId: string, key: string, sandbox: boolean): string {
  return `${projectId}\n${sandbox ? "sandbox\n" : ""}${key}`;
}

export class VideoJobs {
  private readonly byKey = new Map<string, VideoJob>();
  private readonly running = new Map<string, Set<VideoJob>>();
  private readonly timer: NodeJS.Timeout;
  /** Stops the background retries of records the store could not take (video-record.ts) when the gateway closes. */
  private readonly closing = new AbortController();

  constructor(private readonly gateway: GatewayHandle) {
    this.timer = setInterval(() => this.sweep(), 10 * 60_000);
    this.timer.unref();
  }

  find(projectId: string, key: string, sandbox: boolean): VideoJob | undefined {
    return this.byKey.get(keyOf(projectId, key, sandbox));
  }

  /** Jobs running in the slot of this project, model and kind of key (live or sandbox). */
  runningCount(projectId: string, modelId: string, sandbox: boolean): number {
    return this.running.get(slotOf(projectId, modelId, sandbox))?.size ?? 0;
  }

  /**
   * Starts the upstream job detached from ctx's client connection (it keeps ctx's targets and drivers). The job
   * takes over ctx's metering: its own Meter writes the one ledger record under ctx's generation id (and settles
   * ctx's budget hold with it) when the job ends, whether or not anyone is still waiting; ctx itself records nothing.
   */
  start(ctx: GatewayContext, call: VideosCall, opts: { key?: string; fingerprint: string; jobTimeoutMs: number; callTimeoutMs: number; claim?: JobClaim }): VideoJob {
    const projectId = ctx.auth?.projectId ?? "";
    const modelId = ctx.model!.id;
    const controller = new AbortController();
    const job: VideoJob = {
      id: `vid_${ulid()}`, projectId, modelId, key: opts.key, fingerprint: opts.fingerprint,
      status: "running", promise: undefined as never, controller,
    };
    const slot = slotOf(projectId, modelId, ctx.auth?.sandbox === true);
    let set = this.running.get(slot);
    if (!set) this.running.set(slot, (set = new Set()));
    set.add(job);
    const byKeyId = opts.key ? keyOf(projectId, opts.key, ctx.auth?.sandbox === true) : undefined;
    if (byKeyId) this.byKey.set(byKeyId, job);
    if (opts.claim) shareJobId(ctx, opts.claim.scope, job.id, opts.jobTimeoutMs);

    const store = this.gateway.store;
    const claim = opts.claim;
    // Hold a config snapshot so a reload cannot close the drivers under a running job.
    const snapshot = this.gateway.acquire();
    const attempts: ModelAttempt[] = [];
    // The budget hold goes with the job: it stays reserved while the job runs past a 504 or a client that left, and
    // is settled by the job's record.
    const hold = ctx.budget;
    ctx.budget = undefined;
    const sub: GatewayContext = { ...ctx, attempts, drivers: snapshot.drivers, signal: controller.signal, budget: hold, meter: undefined };
    const meter = (sub.meter = new Meter(sub));
    const logFailed = (err: unknown) => this.gateway.log.error("video job ledger record failed", { job: job.id, requestId: ctx.requestId, error: String(err) });
    job.promise = (async () => {
      try {
        const out = await withDeadline(opts.jobTimeoutMs, `Video job ${job.id} on ${modelId}`, (signal) =>
          dispatchCall<VideosOutput>(sub, "videos", call, { signal, targets: ctx.targets.map((t) => ({ ...t, timeoutMs: t.timeoutMs ?? opts.callTimeoutMs })) }), controller.signal);
        const asset = await keepAsset(this.gateway, "vid", out.bytes, out.contentType, VIDEO_URL_TTL_S);
        const inputTokens = out.inputTokens || estimateTokens(call.prompt);
        sub.usage = { inputTokens, outputTokens: 0, videoSeconds: Math.ceil(out.duration) };
        // Billed here, once, before the asset is on record or handed to anyone: a video can then never be delivered
        // unbilled (by a repeat after a restart, another replica, or to nobody once every waiter left). The record's
        // generation id is the starting request's, and the store writes one record per generation id, so a replayed
        // write cannot bill twice. A crash before this line loses the video unbilled (nothing can deliver it); after
        // it and before the store record below, the key stays claimed until job_timeout_seconds and a repeat then
        // runs (and bills) a new job. A record the store cannot take now is retried in the background.
        await meter.commit({ status: 200, aborted: false }).catch(logFailed);
        const result: VideoAsset = {
          id: job.id, created: Math.floor(Date.now() / 1000), model: sub.resolvedTarget?.modelId ?? modelId, upstreamModel: sub.upstreamModel, asset,
          duration: out.duration, size: out.size, inputTokens,
          resolvedProvider: sub.resolvedProvider, attempts,
          generationId: ctx.generationId, costUsd: costUsd(sub, meter.finalUsage({ status: 200, aborted: false })?.usage),
        };
        // Recorded before anyone is answered, so a restart or another replica finds it. Until the store takes it
        // (an outage), this process serves the job from byKey and the claim keeps other replicas from a second job.
        if (claim) {
          await recordJob(this.gateway, job.id,
            () => store.idempotencyComplete(claim.scope, opts.fingerprint, claim.owner, { kind: "json", status: 200, headers: {}, body: result }, KEEP_FINISHED_MS, Date.now()),
            { giveUpAt: Date.now() + KEEP_FINISHED_MS, stop: this.closing.signal });
        }
        return result;
      } catch (err) {
        // A failed job's attempts are recorded too (nothing billed unless the upstream reported usage).
        const e = toGatewayError(err);
        await meter.commit({ status: e.status, error: e, aborted: false }).catch(logFailed);
        if (claim) await store.idempotencyRelease(claim.scope, claim.owner).catch(() => {});
        throw err;
      } finally {
        this.gateway.release(snapshot);
      }
    })();
    job.promise.then(
      () => { job.status = "succeeded"; },
      () => {
        job.status = "failed";
        // A failed job is not replayed: a retry with the same key starts afresh.
        if (byKeyId && this.byKey.get(byKeyId) === job) this.byKey.delete(byKeyId);
      },
    ).finally(() => {
      job.finishedAt = Date.now();
      set!.delete(job);
      if (!set!.size) this.running.delete(slot);
    });
    return job;
  }

  /**
   * Wait for the job on behalf of one request: resolves with the asset, or rejects when the client leaves or
   * the hold time runs out (504). The job keeps running either way, also without an idempotency key: providers
   * cannot cancel a video job, so it is billed when it ends, and a repeat with the same key collects it. `sentKey`: this
   * request's key as the client spelled it (the 504 names it back), undefined when it sent none.
   */
  async hold(job: VideoJob, signal: AbortSignal, holdMs: number, sentKey: string | undefined): Promise<VideoAsset> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      return await Promise.race([
        job.promise,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(clientClosed());
          if (signal.aborted) onAbort();
          else signal.addEventListener("abort", onAbort, { once: true });
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(stillRunning(holdMs, job.id, sentKey)), holdMs);
        }),
      ]);
    } catch (e) {
      throw toGatewayError(e);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }

  sweep(now = Date.now()): void {
    for (const [k, job] of this.byKey) if (job.finishedAt && now - job.finishedAt > KEEP_FINISHED_MS) this.byKey.delete(k);
  }

  close(): void {
    clearInterval(this.timer);
    this.closing.abort();
    for (const set of this.running.values()) for (const job of set) job.controller.abort(new Error("gateway closing"));
  }
}

/**
 * The 504 of a request that gave up waiting: the job runs on. With a key a repeat with it collects the job (`key` is
 * echoed as the client sent it). Without one nothing can collect it: the job is billed when it is ready, and a repeat
 * would start (and bill) another, so the client is told so, and told not to retry (x-should-retry: false, which the
 * OpenAI and Anthropic SDKs obey over the status). The limit as configured (timeout_seconds: 0.5 is 0.5 s, not
 * "1 s"); the job id when known (a replica attaching to another's job learns it from the store, when it can).
 */
export function stillRunning(holdMs: number, jobId: string | undefined, key: string | undefined, elsewhere = false): GatewayError {
  const s = Math.round(holdMs) / 1000;
  const running = `The video is still being generated${elsewhere ? " by another gateway instance" : ""} after ${s} s`;
  const details = { ...(jobId ? { job_id: jobId } : {}), limit_seconds: s, ...(key ? { idempotency_key: key } : {}) };
  if (key) return new GatewayError(504, "UPSTREAM_TIMEOUT", `${running}; repeat the request with the same idempotency key to pick it up`, { retryable: true, details });
  return new GatewayError(504, "UPSTREAM_TIMEOUT",
    `${running}. This request sent no idempotency key, so the video cannot be collected: it is billed when it is ready, ` +
    "and repeating the request starts (and bills) a new one. Send x-mg-idempotency-key (a ULID or UUID) next time so that a repeat picks the video up",
    { retryable: false, headers: DO_NOT_RETRY, details });
}

const byGateway = new WeakMap<GatewayHandle, VideoJobs>();

export function videoJobsOf(gateway: GatewayHandle): VideoJobs {
  let jobs = byGateway.get(gateway);
  if (!jobs) {
    const created = new VideoJobs(gateway);
    byGateway.set(gateway, (jobs = created));
    gateway.onClose(() => created.close());
  }
  return jobs;
}
