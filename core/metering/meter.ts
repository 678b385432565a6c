// Per-request metering: what the request used (reported by the provider, or estimated when the client left first
// or the provider reported none), what it cost at the serving endpoint's prices, and its one ledger record — written
// together with the spend and the budget settlement in one atomic store call. A core service reached through the
// context (meterFor(ctx), kept on ctx.meter): usage-metering writes the record, budget commits it as a fallback so
// spend is always counted, rate-limit corrects its token windows by the final usage. Plugins share it here, never
// through each other's files; whichever commits first writes the one record, so no pipeline order is implied.
import { performance } from "node:perf_hooks";
import type { Registry } from "prom-client";
import type { GatewayContext, Outcome } from "../pipeline/context.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import type { LedgerEntry, LedgerOutcome, Settlement } from "../store/types.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import { chargedAtOf } from "../store/periods.ts";
import { costParts } from "../money/money.ts";
import { billableUsage, usageFixed } from "./sane-usage.ts";
import { servedTarget } from "./usage-ceiling.ts";
import { requestCost } from "./turn-cost.ts";
import { CellCounter } from "../metrics-cells.ts";
import type { Pricing } from "../generated/types/gateway.ts";
import { inputUpperEstimate, outputTokensOn } from "./request-size.ts";
import { answerOutputTokens, eventOutputTokens } from "./output-estimate.ts";
import { reportedTerminalUsage } from "./terminal-usage.ts";
import { isFinalUsage } from "./final-usage.ts";
import type { SseEvent } from "../sse/parse.ts";
import type {} from "../observability/served-by.ts"; // ctx.replayed

/** A budget reservation held by this request (set by the budget plugin). */
export interface BudgetHold extends Settlement {
  reservedPico: bigint;
  settled: boolean;
  /** When the holds were made (ms since the epoch): the cost is charged to the budget periods containing it. */
  at: number;
  /**
   * A second hold on another scope (the key's, when its project has a budget too), given back once the record has
   * landed — the key's spend counts the cost from then on — and before the answer completes, so the client's next
   * request never finds it still held.
   */
  also?: Settlement;
  /**
   * Make the holds cover at least `pico` (the budget plugin's service for an answer that costs a set price, as a
   * response-cache hit does, which may exceed the worst case reserved): true when they do, false when the budget (the
   * project's or the key's) has no room for it. What it adds is given back once the record has landed.
   */
  cover?(pico: bigint): Promise<boolean>;
}

/** A request answered from the response cache (plugins/response-cache): no provider reached, billed at the hit price. */
export interface CacheHit {
  /** The hit price, USD as a decimal string (sandbox traffic: 0). */
  costUsd: string;
  costPico: bigint;
}

declare module "../pipeline/context.ts" {
  interface GatewayContext {
    budget?: BudgetHold;
    meter?: Meter;
    cacheHit?: CacheHit;
    /**
     * The client left while the opening events of the stream answering it were held (core/sse/opening-hold.ts): set by
     * dispatch, which then never adopts the stream as the answer. It is billed as a stream the client left mid-stream.
     */
    streamLeftInHold?: boolean;
  }
}

export interface UsageCounters {
  tokens: CellCounter<"project" | "model" | "direction">;
  cost: CellCounter<"project" | "model">;
}

const countersByRegistry = new WeakMap<Registry, UsageCounters>();

/**
 * Get or register the project-level counters (setup runs again on every reload; names must stay unique). They name
 * every project and its spend, so they exist only with `metrics.project_labels` (see dropUsageCounters).
 */
export function usageCounters(registry: Registry): UsageCounters {
  let c = countersByRegistry.get(registry);
  if (c) return c;
  c = {
    tokens: new CellCounter({
      name: "gateway_project_tokens_total",
      help: "Billed tokens by project, model and direction (input, output, cache_read, cache_write); sandbox traffic is left out, as in the ledger's usage.",
      labelNames: ["project", "model", "direction"] as const,
      registers: [registry],
    }),
    cost: new CellCounter({
      name: "gateway_project_cost_usd_total",
      help: "Cost in USD by project and model (sandbox traffic left out: it costs 0). The ledger holds the exact decimals.",
      labelNames: ["project", "model"] as const,
      registers: [registry],
    }),
  };
  countersByRegistry.set(registry, c);
  return c;
}

/** `metrics.project_labels` turned off by a reload: the series go from /metrics at once. */
export function dropUsageCounters(registry: Registry): void {
  if (!countersByRegistry.delete(registry)) return;
  registry.removeSingleMetric("gateway_project_tokens_total");
  registry.removeSingleMetric("gateway_project_cost_usd_total");
}

/** Sandbox and target-less requests cost nothing (one object, so money.ts parses its prices once). */
const NO_PRICES: Pricing = {};

/** Endpoints whose answers are generated text, estimated when the provider reports no usage. */
const GENERATIVE = new Set(["chat", "messages", "responses", "gemini"]);

export class Meter {
  /**
   * Estimated tokens of the generated text relayed so far (output-estimate.ts): at least one per event that carries
   * some. Framing events carry none, so a cut stream bills the same in every client protocol.
   */
  private relayedTokens = 0;
  /**
   * The same, of the events a stage that holds text back (the guardrails' output window) took from the upstream:
   * what was generated, held text included, which a cut stream bills even though the client never got it.
   */
  private generatedTokens = 0;
  private answerTokens?: number;
  private usage?: { usage: Usage; estimated: boolean };
  private committed?: Promise<void>;
  /** Work that lands with the record (see withRecord). */
  private beside?: ((outcome: Outcome) => Promise<void> | undefined)[];
  /** What the record waits for (see holdRecord). */
  private hold?: (outcome: Outcome) => Promise<void> | undefined;
  /** When the request ended, if its record waited after that (see holdRecord). */
  private endedAt?: number;

  constructor(private readonly ctx: GatewayContext) {}

  /** The endpoint that served (or last tried) the request. */
  target(): Target | undefined {
    return servedTarget(this.ctx);
  }

  /** One event on its way to the client (not the terminal one). */
  relayed(ev: SseEvent): void {
    this.relayedTokens += eventOutputTokens(this.ctx.endpoint, ev);
  }

  /** One event as the upstream sent it (in the client's protocol), read by a stage that may hold its text back. */
  generated(ev: SseEvent): void {
    this.generatedTokens += eventOutputTokens(this.ctx.endpoint, ev);
  }

  /**
   * Usage to bill: the provider's own figures; or, where it reported none (no usage at all, or zero input or zero
   * output beside generated text), an estimate that errs high, `estimated: true` — output from the text generated
   * (a stream's events, a JSON answer's content), input from the request's size; and the same for a stream cut off
   * before its usage arrived (one that failed after its terminal event reported it is billed that: terminal-usage.ts).
   */
  finalUsage(outcome?: Outcome): { usage: Usage; estimated: boolean } | undefined {
    if (this.usage) return this.usage;
    const { ctx } = this;
    // A cached answer was generated once, by the request that was billed for it; replaying it (a response-cache hit,
    // an idempotent replay) uses no tokens — and so gives back a rate limit's token charge (plugins/rate-limit).
    if (ctx.cacheHit || ctx.replayed) return (this.usage = { usage: { inputTokens: 0, outputTokens: 0 }, estimated: false });
    const reported = billableUsage(ctx);
    const response = ctx.response;
    // A stream left during the hold was never the answer (no ctx.response) but is billed as one cut mid-stream: its
    // usage is the upstream's running count (message_start's), not its final one.
    const stream = response?.kind === "stream" || ctx.streamLeftInHold === true;
    // A stream that failed after its upstream's terminal event reported the usage is billed that, as an ok one is; so
    // is one the gateway's own guardrail ended after the upstream's final usage arrived (an answer written at once, a
    // complete one moderation blocked at its end): the upstream counted the whole answer, held text included.
    const refusedAfterFinal = ctx.guardrail?.blocked !== undefined && isFinalUsage(ctx.usage);
    const cut = outcome?.aborted === true || (outcome?.streamError !== undefined && !reportedTerminalUsage(outcome.streamError) && !refusedAfterFinal);
    const generated = GENERATIVE.has(ctx.endpoint);
    if (reported && !(stream && cut)) {
      if (!generated) return (this.usage = { usage: reported, estimated: false });
      const noInput = !reported.inputTokens && !reported.cacheReadTokens && !reported.cacheWriteTokens;
      const noOutput = !reported.outputTokens && this.textTokens() > 0;
      if (!noInput && !noOutput) return (this.usage = { usage: reported, estimated: false });
      const usage = { ...reported };
      if (noInput) usage.inputTokens = inputUpperEstimate(ctx);
      if (noOutput) usage.outputTokens = this.capped(this.textTokens());
      return (this.usage = { usage, estimated: true });
    }
    // No usage: a stream (cut off, or whose provider never sent it) or a JSON answer — bill what was generated.
    if (!stream && !(generated && response?.kind === "json" && response.status < 300)) return undefined;
    const output = this.textTokens();
    // The mcp loop's turns that settled reported their usage (in `reported`); a turn an upstream served but that was
    // cut before its own usage has its prompt estimated as a request of its own would, on top of theirs. A turn that
    // failed on every endpoint is not counted in modelTurns (mcp-loop.ts): nothing was served, nothing is estimated.
    const mcp = ctx.turnUsages !== undefined;
    const cutTurn = mcp && (ctx.modelTurns ?? 1) > ctx.turnUsages!.length;
    const inputTokens = mcp ? (reported?.inputTokens ?? 0) + (cutTurn ? inputUpperEstimate(ctx) : 0) : reported?.inputTokens || inputUpperEstimate(ctx);
    const usage = { ...reported, inputTokens, outputTokens: Math.max(reported?.outputTokens ?? 0, this.capped(output)) };
    return (this.usage = { usage, estimated: true });
  }

  /**
   * Estimated tokens of the generated text: a stream's so far (what the upstream sent, text a stage held back
   * included; or what was relayed when that is more, placeholders restored in it), or the JSON answer's.
   */
  private textTokens(): number {
    const response = this.ctx.response;
    if (response?.kind === "stream") return Math.max(this.relayedTokens, this.generatedTokens);
    return (this.answerTokens ??= response?.kind === "json" ? answerOutputTokens(response.body) : 0);
  }

  /** Never more output than the request allowed (which is what the budget reserved). */
  private capped(tokens: number): number {
    // Never more output than the request asked the serving upstream for (which is what the budget reserved).
    const target = this.target();
    return Math.min((target && outputTokensOn(this.ctx, target, target.maxTokens)) ?? Infinity, tokens);
  }

  /** Write the ledger record once (later calls return the same promise). */
  commit(outcome: Outcome): Promise<void> {
    return (this.committed ??= this.firstCommit(outcome));
  }

  /**
   * Make the record wait for what `hold` returns when the first commit comes (undefined: nothing, write at once; the
   * promise must never reject). Usage-metering's, for an upstream stream a plugin reads after the answer was sent:
   * its usage comes at its end, and whichever step commits first (budget's at the request's end too) waits for it.
   */
  holdRecord(hold: (outcome: Outcome) => Promise<void> | undefined): void {
    this.hold = hold;
  }

  private firstCommit(outcome: Outcome): Promise<void> {
    const wait = this.hold?.(outcome);
    if (!wait) return this.writeAndRelease(outcome);
    // The request's latency is until now (its end), not until a plugin has finished reading the stream.
    this.endedAt = performance.now();
    return wait.then(() => {
      // What was worked out before (the answer's cost header) did not have the usage the stream reported at its end.
      this.usage = undefined;
      return this.writeAndRelease(outcome);
    });
  }

  /**
   * Run `work` beside the record's write, when the request is committed: before the answer completes (a JSON answer
   * or an error before it is sent, a stream before its terminal event), so the client's next request finds it done.
   * It is started with the write, not after it, so a remote store's round trips overlap; its failure is logged and
   * never keeps the record from being written. Rate-limit corrects its token windows this way.
   */
  withRecord(work: (outcome: Outcome) => Promise<void> | undefined): void {
    (this.beside ??= []).push(work);
  }

  private besideWork(work: (outcome: Outcome) => Promise<void> | undefined, outcome: Outcome): Promise<void> | undefined {
    const failed = (err: unknown) => this.ctx.gateway.log.warn("work done with the ledger record failed", { requestId: this.ctx.requestId, error: String(err) });
    try {
      return work(outcome)?.catch(failed);
    } catch (err) {
      failed(err);
      return undefined;
    }
  }

  private async writeAndRelease(outcome: Outcome): Promise<void> {
    const beside = this.beside?.map((work) => this.besideWork(work, outcome));
    try {
      await this.write(outcome);
    } finally {
      const also = this.ctx.budget?.also;
      if (also) await this.ctx.gateway.store.release(also); // never fails: one the store cannot take now is made later
      if (beside) await Promise.all(beside);
    }
  }

  private async write(outcome: Outcome): Promise<void> {
    const { ctx } = this;
    const hold = ctx.budget;
    const settle: Settlement | undefined = hold && !hold.settled ? { project: hold.project, periodKey: hold.periodKey, id: hold.id } : undefined;
    if (hold) hold.settled = true;
    const store = ctx.gateway.store;
    const auth = ctx.auth;
    if (auth && ctx.cacheHit) return this.written(cacheHitEntry(ctx, auth, ctx.cacheHit, outcome), settle);
    if (!auth || ctx.attempts.length === 0) {
      // Never reached a provider (refused by a policy, replayed, invalid): nothing to bill. A guardrail's refusal is
      // still recorded, at no cost, with the rule that refused it.
      if (auth && ctx.guardrail?.blocked) return recordForRequest(ctx, blockedEntry(ctx, auth, outcome), settle);
      if (settle) await store.release(settle);
      return;
    }
    const billed = this.finalUsage(outcome);
    const usage = billed?.usage ?? { inputTokens: 0, outputTokens: 0 };
    const target = this.target();
    const cost = auth.sandbox || !target ? costParts({ inputTokens: 0, outputTokens: 0 }, NO_PRICES) : requestCost(ctx, usage, target);
    const last = ctx.attempts[ctx.attempts.length - 1]!;
    const entry: LedgerRecord = {
      generationId: ctx.generationId,
      requestId: ctx.requestId,
      ts: Date.now(),
      keyId: auth.keyId,
      project: auth.projectId,
      endpoint: ctx.endpoint,
      model: last.model,
      provider: ctx.resolvedProvider ?? last.provider,
      attempts: ctx.attempts.length,
      inputTokens: usage.inputTokens || 0,
      outputTokens: usage.outputTokens || 0,
      cacheReadTokens: usage.cacheReadTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
      reasoningTokens: usage.reasoningTokens ?? 0,
      images: usage.images ?? 0,
      videoSeconds: usage.videoSeconds ?? 0,
      searchUnits: usage.searchUnits ?? 0,
      webSearches: usage.webSearches ?? 0,
      costUsd: cost.usd,
      costPico: cost.pico,
      latencyMs: Math.round(((this.endedAt ?? performance.now()) - ctx.startedAt) * 10) / 10,
      ttftMs: ctx.ttftMs === undefined ? null : Math.round(ctx.ttftMs * 10) / 10,
      status: outcome.status,
      outcome: outcomeOf(outcome, ctx),
      sandbox: auth.sandbox,
      estimated: billed?.estimated === true || usageFixed(ctx),
      // The fallback chain as dispatch walked it, kept with the record (GET of one request shows it).
      attemptList: ctx.attempts.map((a) => ({ model: a.model, provider: a.provider, status: a.status, latencyMs: a.latencyMs, ...(a.errorCode ? { error: a.errorCode } : {}) })),
    };
    if (ctx.guardrail) entry.guardrail = ctx.guardrail.actions.join(",");
    return this.written(entry, settle);
  }

  /**
   * Record the entry (with its budget settlement) and count it in the per-project series — live traffic only: they
   * are the billed figures, and the ledger's usage leaves sandbox records out unless asked.
   */
  private async written(entry: LedgerEntry, settle: Settlement | undefined): Promise<void> {
    const { ctx } = this;
    await recordForRequest(ctx, entry, settle);
    if (!ctx.config.metrics.projectLabels || entry.sandbox) return;
    const counters = usageCounters(ctx.gateway.metrics.registry);
    const project = entry.project, model = entry.model;
    if (entry.inputTokens) counters.tokens.add(entry.inputTokens, project, model, "input");
    if (entry.outputTokens) counters.tokens.add(entry.outputTokens, project, model, "output");
    if (entry.cacheReadTokens) counters.tokens.add(entry.cacheReadTokens, project, model, "cache_read");
    if (entry.cacheWriteTokens) counters.tokens.add(entry.cacheWriteTokens, project, model, "cache_write");
    counters.cost.add(Number(entry.costPico) / 1e12, project, model);
  }
}

/**
 * Write a ledger record made on behalf of the request in `ctx` (its own, a moderation call's, a tool call's): every
 * such record is stamped the same way, so all of a request's cost is spent in the budget periods its holds were made
 * in (a request begun before midnight and done after it spends the day that reserved it), while `ts` stays the time
 * of the record. Every per-request record goes through here, never store.record directly.
 */
export function recordForRequest(ctx: Pick<GatewayContext, "gateway" | "budget">, entry: LedgerEntry, settle?: Settlement): Promise<void> {
  const heldAt = ctx.budget?.at;
  if (heldAt !== undefined) {
    const chargedAt = chargedAtOf(heldAt, entry.ts);
    if (chargedAt !== undefined) entry.chargedAt = chargedAt;
  }
  return ctx.gateway.store.record(entry, settle);
}

/** The record of a request a guardrail refused before any provider saw it: nothing used, nothing billed. */
function blockedEntry(ctx: GatewayContext, auth: NonNullable<GatewayContext["auth"]>, outcome: Outcome): LedgerRecord {
  const asked = typeof ctx.body?.model === "string" ? ctx.body.model.slice(0, 200) : "";
  const zero = costParts({ inputTokens: 0, outputTokens: 0 }, NO_PRICES);
  return {
    generationId: ctx.generationId, requestId: ctx.requestId, ts: Date.now(), keyId: auth.keyId, project: auth.projectId,
    endpoint: ctx.endpoint, model: ctx.model?.id ?? asked, provider: "", attempts: 0,
    inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0,
    costUsd: zero.usd, costPico: zero.pico, latencyMs: Math.round((performance.now() - ctx.startedAt) * 10) / 10, ttftMs: null,
    status: outcome.status, outcome: outcomeOf(outcome, ctx), sandbox: auth.sandbox, estimated: false, guardrail: ctx.guardrail!.actions.join(","),
  };
}

/**
 * The ledger record of an answer replayed from the response cache: provider "cache", no tokens, the hit price; and
 * what the guardrails did to it (a hit is checked as a miss is).
 */
function cacheHitEntry(ctx: GatewayContext, auth: NonNullable<GatewayContext["auth"]>, hit: CacheHit, outcome: Outcome): LedgerEntry {
  const entry: LedgerEntry = {
    generationId: ctx.generationId,
    requestId: ctx.requestId,
    ts: Date.now(),
    keyId: auth.keyId,
    project: auth.projectId,
    endpoint: ctx.endpoint,
    model: ctx.model?.id ?? String(ctx.body?.model ?? ""),
    provider: "cache",
    attempts: 0,
    inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
    images: 0, videoSeconds: 0, searchUnits: 0, webSearches: 0,
    costUsd: hit.costUsd,
    costPico: hit.costPico,
    latencyMs: Math.round((performance.now() - ctx.startedAt) * 10) / 10,
    ttftMs: null,
    status: outcome.status,
    outcome: outcomeOf(outcome, ctx),
    sandbox: auth.sandbox,
    estimated: false,
    cacheHit: true,
  };
  if (ctx.guardrail) entry.guardrail = ctx.guardrail.actions.join(",");
  return entry;
}

/** How a request ended, as its ledger record (and its access line) says. */
export function outcomeOf(o: Outcome, ctx: GatewayContext): LedgerOutcome {
  if (o.aborted) return "aborted";
  if (ctx.guardrail?.blocked) return "blocked";
  if (o.streamError) return "stream_error";
  return o.error || o.status >= 400 ? "error" : "ok";
}

/** The request's meter, created on first use. */
export function meterFor(ctx: GatewayContext): Meter {
  return (ctx.meter ??= new Meter(ctx));
}
