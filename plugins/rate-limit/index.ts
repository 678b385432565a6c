// rate-limit: requests and tokens per minute, per key (`rate_limits` on the key, or the project's `rate_limits`
// as every key's default) and per project (`project_rate_limits`). Limits refill continuously (GCRA), so
// Retry-After is the wait until the request fits. Tokens are charged from an estimate (input ≈ chars/4 plus the
// requested max output) and corrected once usage is known. Every response carries the headers of the Limits
// section; a refusal is 429 RATE_LIMITED with Retry-After.
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import type { GatewayContext, Outcome } from "../../core/pipeline/context.ts";
import type { ProjectConfig, RateLimits } from "../../core/generated/types/gateway.ts";
import type { RateCharge, RateState } from "../../core/store/types.ts";
import { inputEstimate, requestedOutput } from "../../core/metering/request-size.ts";
import { meterFor } from "../../core/metering/meter.ts";

const keyLimits = new WeakMap<ProjectConfig, Map<string, RateLimits | undefined>>();

function limitsOfKey(project: ProjectConfig, keyId: string): RateLimits | undefined {
  let m = keyLimits.get(project);
  if (!m) keyLimits.set(project, (m = new Map(project.keys.map((k) => [k.id, k.rate_limits ?? project.rate_limits]))));
  return m.get(keyId);
}

function estimateTokens(ctx: GatewayContext): number {
  // count_tokens uses no model tokens: it costs one request (rpm) and nothing against tpm.
  if (ctx.endpoint === "count_tokens") return 0;
  return ctx.body === undefined ? 0 : inputEstimate(ctx) + (requestedOutput(ctx.body) ?? 0);
}

/** The tightest of several windows. */
const tightest = (ws: RateState[]) => ws.reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetMs > a.resetMs) ? b : a));

function headers(ctx: GatewayContext, requests: RateState[], tokens: RateState[], now: number): void {
  const h = ctx.responseHeaders;
  const secs = (ms: number) => String(Math.ceil(ms / 1000));
  if (requests.length) {
    const r = tightest(requests);
    h["x-ratelimit-limit-requests"] = String(r.limit);
    h["x-ratelimit-remaining-requests"] = String(r.remaining);
    h["x-ratelimit-reset-requests"] = secs(r.resetMs);
  }
  if (tokens.length) {
    const t = tightest(tokens);
    h["x-ratelimit-limit-tokens"] = String(t.limit);
    h["x-ratelimit-remaining-tokens"] = String(t.remaining);
    h["x-ratelimit-reset-tokens"] = secs(t.resetMs);
  }
  // The general set: tokens left in the window (requests when only rpm applies), reset as a Unix timestamp.
  const g = tokens.length ? tightest(tokens) : tightest(requests);
  h["x-ratelimit-remaining"] = String(g.remaining);
  h["x-ratelimit-reset"] = String(Math.ceil((now + g.resetMs) / 1000));
}

export default definePlugin({
  name: "rate-limit",
  dependsOn: ["auth"],
  async handle(ctx, next) {
    const auth = ctx.auth;
    if (!auth) return next();
    const perKey = limitsOfKey(auth.project.config, auth.keyId);
    const perProject = auth.project.config.project_rate_limits;
    if (!perKey?.rpm && !perKey?.tpm && !perProject?.rpm && !perProject?.tpm) return next();

    const estimate = estimateTokens(ctx);
    const charges: RateCharge[] = [];
    const kinds: ("r" | "t")[] = [];
    const add = (key: string, limit: number | undefined, kind: "r" | "t") => {
      if (!limit) return;
      charges.push({ key, limit, cost: kind === "r" ? 1 : estimate });
      kinds.push(kind);
    };
    add(`key:${auth.projectId}:${auth.keyId}:rpm`, perKey?.rpm, "r");
    add(`key:${auth.projectId}:${auth.keyId}:tpm`, perKey?.tpm, "t");
    add(`project:${auth.projectId}:rpm`, perProject?.rpm, "r");
    add(`project:${auth.projectId}:tpm`, perProject?.tpm, "t");

    const now = Date.now();
    const result = await ctx.gateway.store.rateLimit(charges, now);
    headers(ctx, result.windows.filter((_, i) => kinds[i] === "r"), result.windows.filter((_, i) => kinds[i] === "t"), now);
    if (!result.ok) {
      const retryAfter = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      const which = result.windows.filter((w, i) => w.remaining < charges[i]!.cost).map((w) => w.key.split(":").slice(-1)[0]);
      throw new GatewayError(429, "RATE_LIMITED",
        `Rate limit reached (${[...new Set(which)].join(", ") || "limit"}); retry after ${retryAfter}s`,
        {
          retryAfter,
          // The official SDKs prefer the exact wait in milliseconds when it is given.
          headers: { "retry-after-ms": String(Math.max(1, Math.ceil(result.retryAfterMs))) },
          details: { retry_after_seconds: retryAfter, estimated_tokens: estimate },
        });
    }

    const tokenCharges = charges.filter((_, i) => kinds[i] === "t");
    if (!tokenCharges.length) return next();
    // Correct the token windows by what the request really used (estimated if the client left mid-stream):
    // at once for a JSON answer, when the stream ends for a stream.
    let corrected = false;
    const correct = (outcome?: Outcome) => {
      if (corrected) return;
      corrected = true;
      const billed = meterFor(ctx).finalUsage(outcome)?.usage;
      const used = billed ? billed.inputTokens + billed.outputTokens + (billed.cacheReadTokens ?? 0) + (billed.cacheWriteTokens ?? 0) : 0;
      const delta = used - estimate;
      if (delta === 0) return;
      return Promise.all(tokenCharges.map((c) => ctx.gateway.store.rateAdjust(c.key, c.limit, delta, Date.now()))).then(() => {}, (err) =>
        ctx.gateway.log.warn("rate-limit correction failed", { requestId: ctx.requestId, error: String(err) }));
    };
    ctx.onFinish(correct);
    await next();
    if (ctx.response && ctx.response.kind !== "stream") await correct();
  },
});
