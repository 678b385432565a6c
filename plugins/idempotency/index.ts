// idempotency: `Idempotency-Key` (free-form) or `x-mg-idempotency-key` (a ULID or UUID) on any POST. Within 24 hours, one
// project and one kind of key (live or sandbox: never each other's answers), the same key with the same body replays
// the original response (status, body, or the whole event stream) without calling the provider or billing again,
// marked `Idempotent-Replayed: true`; the same key with a different body is 422. A duplicate that arrives while the
// first is still running waits for it and then replays it. Only 2xx responses are kept: after a failure the key is
// free again, so a retry runs for real. A kept answer the store could not take yet is saved again in the background.
// An answer larger than idempotency.max_record_bytes (a stream: max_stream_record_bytes) is not kept
// (./too-large.ts): a retry gets 422, not a rerun. What "the same request" is: core/http/idempotent-replay.ts, which the
// budget plugin also asks, so that a replay reserves nothing (it bills nothing).
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import type { GatewayContext, GatewayResponse } from "../../core/pipeline/context.ts";
import type { StoredResponse } from "../../core/store/types.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { IDEMPOTENCY_WINDOW_MS, idempotencyKey, idempotencyScope } from "../../core/http/idempotency-key.ts";
import { idempotencyRequestHash, legacyIdempotencyRequestHash } from "../../core/http/idempotent-replay.ts";
import { endpointFor } from "../../core/endpoints/index.ts";
import { recordStream, replayStored, storedOf, storedSize } from "../../core/pipeline/stored-response.ts";
import { DROPPED_PARAMS_HEADER } from "../../core/contracts/provider.ts";
import { recorded } from "../../core/observability/headers.ts";
import type {} from "../../core/observability/served-by.ts"; // ctx.replayed
import { DEFAULT_MAX_RECORD_BYTES, DEFAULT_MAX_STREAM_RECORD_BYTES, tooLargeError, tooLargeRecord, wasTooLarge, type LimitSetting } from "./too-large.ts";
import { LEASE_MS, RENEW_EVERY_MS, claimLeases } from "./claim-lease.ts";
import { DuplicateWait } from "./duplicate-wait.ts";

export const TTL_MS = IDEMPOTENCY_WINDOW_MS;
export const REPLAY_HEADER = "idempotent-replayed";

/** Headers that describe the answer itself, replayed as the original had them (the response cache keeps the same). */
const ANSWER_HEADERS = ["x-mg-upstream-model", DROPPED_PARAMS_HEADER, "x-mg-upstream-request-id"];

/**
 * The kept answer, with the original's headers: who made it (x-mg-provider, as a cache hit's names the cache, but
 * here the provider whose answer it is), its upstream model. The replay itself costs nothing (x-mg-cost-usd: 0, as
 * a cache hit says its hit price); /metrics and the access line count it under provider "replay" (ctx.replayed).
 */
async function replay(ctx: GatewayContext, stored: StoredResponse): Promise<GatewayResponse> {
  const response = replayStored(stored);
  // An answer that names something with a lifetime of its own (an image's signed URL) is made current first.
  const refresh = endpointFor(ctx.endpoint, ctx.protocol)?.refreshKept;
  if (refresh && response.kind === "json") response.body = await refresh(ctx, response.body);
  ctx.replayed = true;
  const h = stored.headers;
  // A record kept before x-mg-provider was: its resolved provider is the same name.
  const provider = h["x-mg-provider"] ?? h["x-mg-resolved-provider"];
  Object.assign(ctx.responseHeaders, h, { [REPLAY_HEADER]: "true", "x-mg-cost-usd": "0" }, provider ? { "x-mg-provider": provider } : {});
  return response;
}

/**
 * Headers of the original response worth replaying (not rate-limit headers: those belong to the new request). A
 * replay writes no ledger record, so its x-mg-generation-id is the original's: the one in its body and the ledger.
 */
function keptHeaders(ctx: GatewayContext): Record<string, string> {
  const h: Record<string, string> = { "x-mg-original-request-id": ctx.requestId };
  // The original's generation id, where a ledger record has it (count_tokens, for one, writes none).
  if (recorded(ctx)) h["x-mg-generation-id"] = ctx.generationId;
  if (ctx.resolvedProvider) h["x-mg-resolved-provider"] = h["x-mg-provider"] = ctx.resolvedProvider;
  for (const name of ANSWER_HEADERS) {
    const v = ctx.responseHeaders[name];
    if (v !== undefined) h[name] = v;
  }
  return h;
}

/** The limits on kept answers, in UTF-8 bytes of the record as stored (storedSize). */
interface Limits {
  /** A JSON or byte answer (already whole in memory): only its row is at stake. */
  maxRecordBytes: number;
  /** A stream, recorded as it passes: also what it may hold in memory meanwhile. */
  maxStreamRecordBytes: number;
}

export default definePlugin<unknown, Limits>({
  name: "idempotency",
  dependsOn: ["auth"],
  setup(_gateway, _options, config) {
    const c = config.raw.idempotency;
    return { maxRecordBytes: c?.max_record_bytes ?? DEFAULT_MAX_RECORD_BYTES, maxStreamRecordBytes: c?.max_stream_record_bytes ?? DEFAULT_MAX_STREAM_RECORD_BYTES };
  },
  // Not async: a request without a key (most of them) goes straight on, with no promise of this plugin's own.
  handle(ctx, next, { state }) {
    if (ctx.method !== "POST" || !ctx.auth) return next();
    // Video jobs attach by key themselves (core/endpoints/video-jobs.ts): a repeat refreshes the signed URL.
    if (ctx.endpoint === "videos") return next();
    const key = idempotencyKey(ctx);
    if (key === undefined) return next();
    return withKey(ctx, next, ctx.auth.projectId, key, state);
  },
});

/** The header the key came in, as errors about it name it. */
const keyField = (ctx: GatewayContext) => (ctx.headers["idempotency-key"] !== undefined ? "Idempotency-Key" : "x-mg-idempotency-key");

async function withKey(ctx: GatewayContext, next: () => Promise<void>, projectId: string, key: string, limits: Limits): Promise<void> {
  const store = ctx.gateway.store;
  const scope = idempotencyScope(projectId, ctx.endpoint, key, ctx.auth!.sandbox);
  let hash = idempotencyRequestHash(ctx);
  let triedLegacy = false;
  const owner = `${ctx.requestId}:${randomUUID()}`;
  const waiting = new DuplicateWait(keyField(ctx), ctx.config.server.upstreamTimeoutMs, Date.now());

  for (;;) {
    const state = await store.idempotencyBegin(scope, hash, owner, LEASE_MS, Date.now(), RENEW_EVERY_MS);
    if (state.state === "new") break;
    if (state.state === "mismatch") {
      // Only a key with a record reaches here, so requests without one never compute the legacy hash.
      if (!triedLegacy) {
        triedLegacy = true;
        const legacy = legacyIdempotencyRequestHash(ctx);
        if (legacy !== hash) {
          hash = legacy;
          continue;
        }
      }
      throw new GatewayError(422, "INVALID_REQUEST", "This idempotency key was already used with a different request body; use a new key for a new request", {
        details: { field: keyField(ctx), reason: "key_reused_with_different_body" },
      });
    }
    if (state.state === "done") {
      if (wasTooLarge(state.response)) throw tooLargeError(state.response, keyField(ctx));
      ctx.response = await replay(ctx, state.response);
      return;
    }
    // The first request with this key is still running (here or on another replica): wait as long as it runs, then
    // replay it. Its process may be gone, its claim not expired yet: then say it is still in progress (a 409).
    const wait = waiting.next(state, Date.now());
    try {
      await sleep(wait, undefined, { signal: ctx.signal });
    } catch {
      throw new GatewayError(499, "INVALID_REQUEST", "The client closed the request while waiting for the first request with this key");
    }
  }

  ctx.keptForReplay = true;
  // The budget reserved nothing because the key held an answer (core/http/idempotent-replay.ts), but it is gone (expired
  // meanwhile): the request runs, so it reserves first (a 402 gives the key back).
  if (ctx.reserveSkipped) {
    try {
      await ctx.reserveSkipped();
    } catch (err) {
      await store.idempotencyRelease(scope, owner).catch(() => {});
      throw err;
    }
  }
  // Renewed while the request runs, however long (./claim-lease.ts), until its record is saved or it is released.
  const lease = { scope, owner, leaseMs: LEASE_MS };
  const leases = claimLeases(store);
  leases.add(lease);
  let ended = false;
  const release = () => {
    ended = true;
    leases.delete(lease);
    return store.idempotencyRelease(scope, owner).catch((err) => ctx.gateway.log.warn("idempotency release failed", { error: String(err) }));
  };
  // A stream nobody read to its end or its failure (so neither saved nor released): stop renewing, the lease ends it.
  ctx.onFinish(() => {
    if (!ended) leases.delete(lease);
  });
  try {
    await next();
  } catch (err) {
    await release();
    throw err;
  }
  const r = ctx.response;
  if (!r || r.status < 200 || r.status >= 300) {
    await release();
    return;
  }
  const headers = keptHeaders(ctx);
  // The answer is good, so it is sent whether or not its record is saved. A record the store could not take (an
  // outage) is saved again in the background while the claim holds: releasing the key would let a retry run, and
  // bill, a second time; until then a retry waits for the record, as it waits for a request still running.
  const complete = (stored: StoredResponse) => store.idempotencyComplete(scope, hash, owner, stored, TTL_MS, Date.now()).then(() => leases.delete(lease));
  const save = (stored: StoredResponse) => {
    ended = true;
    return complete(stored).catch((err) => {
      ctx.gateway.log.warn("idempotency record not saved yet; retrying while the key stays claimed", { requestId: ctx.requestId, error: String(err) });
      void saveLater(ctx, () => complete(stored), release);
    });
  };
  // Past its limit a small record stands for the answer: the key stays used (see ./too-large.ts). The record is
  // measured as stored (its UTF-8 JSON text); a stream stops being held once its events pass the limit.
  const keep = (stored: StoredResponse | undefined, limit: number, setting: LimitSetting) =>
    save(stored && storedSize(stored) <= limit ? stored : tooLargeRecord(r.status, headers, limit, setting));
  if (r.kind === "stream") {
    const maxBytes = limits.maxStreamRecordBytes;
    const done = (events: SseEvent[] | undefined) => keep(events && { kind: "stream", status: r.status, headers, events }, maxBytes, "max_stream_record_bytes");
    ctx.response = { ...r, events: recordStream(r.events, { maxBytes, done, failed: release }) };
    return;
  }
  const stored = storedOf(r, headers);
  if (stored) await keep(stored, limits.maxRecordBytes, "max_record_bytes");
  else await release(); // a passed-through web response (the MCP endpoint's) is not kept for replay
}

/** First retry of a record the store could not take, and the longest gap between retries. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * Try `complete` again until it succeeds or about one lease has passed (the claim is renewed meanwhile; then it is
 * released, so a retry may run). Timers are unref'd: a stopping process does not wait for them, and the claim then
 * lapses with its lease.
 */
async function saveLater(ctx: GatewayContext, complete: () => Promise<unknown>, release: () => Promise<unknown>): Promise<void> {
  const giveUpAt = Date.now() + LEASE_MS - RETRY_MAX_MS;
  for (let wait = RETRY_FIRST_MS; Date.now() + wait < giveUpAt; wait = Math.min(wait * 2, RETRY_MAX_MS)) {
    await sleep(wait, undefined, { ref: false });
    try {
      await complete();
      ctx.gateway.log.info("idempotency record saved after a retry", { requestId: ctx.requestId });
      return;
    } catch {
      // still unavailable: try again
    }
  }
  ctx.gateway.log.warn("idempotency record not saved; the key is released", { requestId: ctx.requestId });
  await release();
}
