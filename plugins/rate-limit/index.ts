// rate-limit: requests and tokens per minute, per key (`rate_limits` on the key — in gateway.yaml or given when
// the key was created through the admin API — or the project's `rate_limits` as every key's default) and per project (`project_rate_limits`). Limits refill continuously (GCRA), so
// Retry-After is the wait until the request fits. Tokens are charged from an estimate (input ≈ chars/4 plus the
// output the upstream is asked for, as the translators write it; nothing when the model decides) and corrected
// once usage is known. Every response carries the headers of the Limits section; a refusal is 429 RATE_LIMITED
// with Retry-After.
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import type { GatewayContext, Outcome } from "../../core/pipeline/context.ts";
import type { ProjectConfig } from "../../core/generated/types/gateway.ts";
import type { KeyRuntime } from "../../core/config/runtime.ts";
import type { RateCharge, RateState } from "../../core/store/types.ts";
import { rateWindows } from "../../core/store/rate-windows.ts";
import { WINDOW_MS, windowState } from "../../core/store/gcra.ts";
import { inputEstimate, requestedOutput } from "../../core/metering/request-size.ts";
import { meterFor } from "../../core/metering/meter.ts";

/**
 * A key's windows, worked out once per config (key strings, limits, which are token windows): the per-request
 * work is then only the charge objects. Plain loops and module-level functions below, not per-request named closures:
 * under tsx each named closure also costs a defineProperty (esbuild keepNames).
 */
interface Plan { keys: string[]; limits: number[]; token: boolean[]; hasTokens: boolean }
/** Per project config, per key record (a reload or a changed stored key gives new objects, hence new plans). */
const plans = new WeakMap<ProjectConfig, WeakMap<KeyRuntime, Plan | null>>();

function planOf(project: ProjectConfig, projectId: string, key: KeyRuntime): Plan | null {
  let m = plans.get(project);
  if (!m) plans.set(project, (m = new WeakMap()));
  let plan = m.get(key);
  if (plan === undefined) {
    const p: Plan = { keys: [], limits: [], token: [], hasTokens: false };
    for (const w of rateWindows(projectId, key.id, key.rateLimits ?? project.rate_limits, project.project_rate_limits)) {
      p.keys.push(w.key);
      p.limits.push(w.limit);
      p.token.push(w.token);
      if (w.token) p.hasTokens = true;
    }
    m.set(key, (plan = p.keys.length ? p : null));
  }
  return plan;
}

/** An auth plugin of one's own may leave ctx.auth.key unset: the key's record is then looked up in the project. */
const declared = new WeakMap<ProjectConfig, Map<string, KeyRuntime>>();
function declaredKey(project: ProjectConfig, projectId: string, keyId: string): KeyRuntime {
  let m = declared.get(project);
  if (!m) declared.set(project, (m = new Map()));
  let k = m.get(keyId);
  if (!k) {
    const rateLimits = project.keys.find((c) => c.id === keyId)?.rate_limits;
    m.set(keyId, (k = { id: keyId, projectId, hash: Buffer.alloc(0), expiresAt: null, revoked: false, source: "yaml", ...(rateLimits ? { rateLimits } : {}) }));
  }
  return k;
}

function estimateTokens(ctx: GatewayContext): number {
  // count_tokens uses no model tokens: it costs one request (rpm) and nothing against tpm.
  if (ctx.endpoint === "count_tokens") return 0;
  return ctx.body === undefined ? 0 : inputEstimate(ctx) + (requestedOutput(ctx) ?? 0);
}

/** The tightest of the windows of one kind (tokens or requests), or undefined when there is none. */
function tightest(ws: RateState[], token: boolean[], kind: boolean): RateState | undefined {
  let a: RateState | undefined;
  for (let i = 0; i < ws.length; i++) {
    if (token[i] !== kind) continue;
    const b = ws[i]!;
    if (!a || b.remaining < a.remaining || (b.remaining === a.remaining && b.resetMs > a.resetMs)) a = b;
  }
  return a;
}

const secs = (ms: number) => String(Math.ceil(ms / 1000));

function headers(ctx: GatewayContext, windows: RateState[], token: boolean[], now: number): void {
  const h = ctx.responseHeaders;
  const r = tightest(windows, token, false);
  if (r) {
    h["x-ratelimit-limit-requests"] = String(r.limit);
    h["x-ratelimit-remaining-requests"] = String(r.remaining);
    h["x-ratelimit-reset-requests"] = secs(r.resetMs);
  }
  const t = tightest(windows, token, true);
  if (t) tokenHeaders(h, t, now);
  // The general set: tokens left in the window (requests when only rpm applies), reset as a Unix timestamp.
  else if (r) generalHeaders(h, r, now);
}

function tokenHeaders(h: Record<string, string>, t: RateState, now: number): void {
  h["x-ratelimit-limit-tokens"] = String(t.limit);
  h["x-ratelimit-remaining-tokens"] = String(t.remaining);
  h["x-ratelimit-reset-tokens"] = secs(t.resetMs);
  generalHeaders(h, t, now);
}

function generalHeaders(h: Record<string, string>, g: RateState, now: number): void {
  h["x-ratelimit-remaining"] = String(g.remaining);
  h["x-ratelimit-reset"] = String(Math.ceil((now + g.resetMs) / 1000));
}

/** Correct the token windows by what the request really used (estimated if the client left mid-stream); once. */
class Correction {
  private done = false;
  readonly run: (outcome?: Outcome) => Promise<void> | undefined;
  /** `windows`: the check's answer at `checkedAt` (what the headers were first set from). */
  constructor(private readonly ctx: GatewayContext, private readonly plan: Plan, private readonly estimate: number,
    private readonly windows: RateState[], private readonly checkedAt: number) {
    this.run = this.correct.bind(this);
  }

  private correct(outcome?: Outcome): Promise<void> | undefined {
    if (this.done) return;
    this.done = true;
    const { ctx, plan } = this;
    const billed = meterFor(ctx).finalUsage(outcome)?.usage;
    const used = billed ? billed.inputTokens + billed.outputTokens + (billed.cacheReadTokens ?? 0) + (billed.cacheWriteTokens ?? 0) : 0;
    const now = Date.now();
    // A JSON answer's or an error's headers are not written yet: they show the windows as the real charge leaves
    // them, not the estimate. A stream's went out with its first byte (the estimate stands there).
    if (ctx.response?.kind !== "stream") this.headers(used, now);
    const store = ctx.gateway.store;
    let adjusts: Promise<void>[] | undefined;
    for (let i = 0; i < plan.keys.length; i++) {
      if (!plan.token[i]) continue;
      const delta = used - charged(this.estimate, plan.limits[i]!);
      if (delta !== 0) (adjusts ??= []).push(store.rateAdjust(plan.keys[i]!, plan.limits[i]!, delta, now));
    }
    if (!adjusts) return;
    return Promise.all(adjusts).then(undefined, (err) =>
      ctx.gateway.log.warn("rate-limit correction failed", { requestId: ctx.requestId, error: String(err) })) as Promise<void>;
  }

  /**
   * The token headers again, from the check's windows with the real charge for the estimate and the refill since:
   * arithmetic only, no store round trip (another request of the key's meanwhile is not seen, as at the check).
   */
  private headers(used: number, now: number): void {
    const { plan, windows } = this;
    let t: RateState | undefined;
    for (let i = 0; i < windows.length; i++) {
      if (!plan.token[i]) continue;
      const w = windows[i]!;
      // As gcraAdjust moves the window's tat (the check's, refilled since), so the figures agree with the store's.
      const tat = Math.max(this.checkedAt + w.resetMs, now) + (used - charged(this.estimate, w.limit)) * (WINDOW_MS / w.limit);
      const s = windowState({ key: w.key, limit: w.limit, cost: 0 }, Math.max(tat, now), now);
      if (!t || s.remaining < t.remaining || (s.remaining === t.remaining && s.resetMs > t.resetMs)) t = s;
    }
    if (t) tokenHeaders(this.ctx.responseHeaders, t, now);
  }
}

/** What the check charged a window for the estimate: never more than the whole window (gcra.ts, redis-scripts.ts). */
const charged = (estimate: number, limit: number) => Math.min(estimate, limit);

export default definePlugin({
  name: "rate-limit",
  dependsOn: ["auth"],
  async handle(ctx, next) {
    const auth = ctx.auth;
    // MCP protocol requests are not model requests: their tool calls have a window of their own (core/mcp/tool-call.ts).
    if (!auth || ctx.endpoint === "mcp") return next();
    const plan = planOf(auth.project.config, auth.projectId, auth.key ?? declaredKey(auth.project.config, auth.projectId, auth.keyId));
    if (!plan) return next();

    const estimate = estimateTokens(ctx);
    const charges: RateCharge[] = new Array(plan.keys.length);
    for (let i = 0; i < plan.keys.length; i++) charges[i] = { key: plan.keys[i]!, limit: plan.limits[i]!, cost: plan.token[i] ? estimate : 1 };

    const now = Date.now();
    const result = await ctx.gateway.store.rateLimit(charges, now);
    headers(ctx, result.windows, plan.token, now);
    if (!result.ok) {
      const retryAfter = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      // The windows the store found without room ("rpm", "tpm"), as it decided, not guessed from what remains.
      const which = new Set(result.refused.map((i) => charges[i]!.key.slice(charges[i]!.key.lastIndexOf(":") + 1)));
      throw new GatewayError(429, "RATE_LIMITED",
        `Rate limit reached (${[...which].join(", ")}); retry after ${retryAfter}s`,
        {
          retryAfter,
          // The official SDKs prefer the exact wait in milliseconds when it is given.
          headers: { "retry-after-ms": String(Math.max(1, Math.ceil(result.retryAfterMs))) },
          details: { retry_after_seconds: retryAfter, estimated_tokens: estimate },
        });
    }

    if (!plan.hasTokens) return next();
    // With the ledger record, before the answer completes (a stream's terminal event, an error's envelope), so on a
    // remote store the client's next request never meets the estimate still charged. A JSON answer no meter commits
    // (a pipeline without usage-metering and budget) is corrected here before it is sent, anything else when it ends.
    const correct = new Correction(ctx, plan, estimate, result.windows, now).run;
    meterFor(ctx).withRecord(correct);
    ctx.onFinish(correct);
    await next();
    if (ctx.response && ctx.response.kind !== "stream") await correct();
  },
});
