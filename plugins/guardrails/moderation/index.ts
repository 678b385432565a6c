// Moderation as a guardrail: the verdict acts (block or flag), a failure follows on_error (fail_open lets the text
// through, flagged; fail_closed refuses: a 503 to retry, or a 502 not to when a retry would fail alike), and every call is a ledger record of its own, billed to the
// project like any other use of a model (endpoint `moderation`, generation id `<request's>:moderation:<side>`).
// A sandbox request is not moderated (see checkModeration): no call, no ledger record of one, the request's own
// record says `flag:moderation-skipped`.
import type { GuardrailModeration } from "../../../core/generated/types/gateway.ts";
import type { GatewayContext } from "../../../core/pipeline/context.ts";
import type { LedgerEntry } from "../../../core/store/types.ts";
import { costParts } from "../../../core/money/money.ts";
import { saneUsage } from "../../../core/metering/sane-usage.ts";
import { recordForRequest } from "../../../core/metering/meter.ts";
import { blocked, note, unavailable, type Side } from "../record.ts";
import { moderate, type ModerationCall, type Verdict } from "./call.ts";
import { cachedVerdict, rememberVerdict, verdictKey } from "./cache.ts";
import { OUT_OF_CREDIT } from "../../../core/retryable-status.ts";

/** Moderate `text` (one side of the request) and act on the verdict; throws the refusal. */
export async function checkModeration(ctx: GatewayContext, spec: GuardrailModeration, text: string, side: Side): Promise<void> {
  if (!text.trim()) return;
  // Sandbox keys reach only the simulator, and the moderation would be a real provider's call on the gateway's key
  // (billed to nobody: sandbox costs 0). The simulator cannot stand in: it has no /moderations, and its chat answer
  // to the judge's prompt is canned text, not a verdict (a fail_closed project's sandbox traffic would all be 503s;
  // a made-up verdict would say nothing about the text anyway). So the text goes through unmoderated, noted like a
  // fail_open moderation that could not answer.
  if (ctx.auth?.sandbox) {
    ctx.gateway.log.debug("guardrail moderation skipped: sandbox key", { requestId: ctx.requestId, side });
    return note(ctx, "moderation-skipped", "flag");
  }
  // The same text under the same settings was judged moments ago (an agent's tool loop resends its user turn on every
  // step): that verdict acts again, with no call and nothing billed.
  const key = verdictKey(ctx.auth?.projectId ?? "", spec, text);
  const seen = cachedVerdict(ctx.gateway, key);
  if (seen) {
    ctx.gateway.log.debug("guardrail moderation verdict reused", { requestId: ctx.requestId, side, flagged: seen.flagged });
    return act(ctx, spec, seen, side);
  }
  const call = await moderate(ctx, spec, text);
  const action = spec.action ?? "block";
  // Part of the request's cost: charged to the budget periods the request was admitted in, as its own record is.
  await recordForRequest(ctx, ledgerEntry(ctx, call, side, call.verdict?.flagged ? `${action}:moderation` : undefined));
  if (call.error) {
    const upstream = call.error.details?.upstream_status;
    const reason = call.error.code === "UPSTREAM_TIMEOUT" ? "timed out"
      : call.retryable ? "failed"
      : call.error.details?.reason === OUT_OF_CREDIT ? "cannot be called: its provider account is out of credit"
      : `cannot be called as configured${typeof upstream === "number" ? `: HTTP ${upstream}` : ""}`;
    ctx.gateway.log.warn("guardrail moderation unavailable", { requestId: ctx.requestId, side, reason, retryable: call.retryable, error: call.error.message });
    if (spec.on_error === "fail_open") return note(ctx, "moderation-unavailable", "flag");
    throw unavailable(ctx, "moderation", side, `the moderation model ${reason}`, call.retryable);
  }
  // Only an answer is remembered: a failure is retried on the next request, under on_error again.
  rememberVerdict(ctx.gateway, key, call.verdict!);
  act(ctx, spec, call.verdict!, side);
}

/** A verdict's effect: nothing, a flag, or the refusal thrown. */
function act(ctx: GatewayContext, spec: GuardrailModeration, verdict: Verdict, side: Side): void {
  if (!verdict.flagged) return;
  if (spec.action === "flag") return note(ctx, "moderation", "flag");
  throw blocked(ctx, "moderation", side, { categories: verdict.categories });
}

function ledgerEntry(ctx: GatewayContext, call: ModerationCall, side: Side, guardrail: string | undefined): LedgerEntry {
  const auth = ctx.auth!;
  const u = saneUsage(call.usage).usage; // an upstream's figures, untrusted: capped, never negative
  const cost = auth.sandbox ? costParts({ inputTokens: 0, outputTokens: 0 }, {}) : costParts(u, call.target.pricing);
  const entry: LedgerEntry = {
    generationId: `${ctx.generationId}:moderation:${side}`,
    requestId: ctx.requestId,
    ts: Date.now(),
    keyId: auth.keyId,
    project: auth.projectId,
    endpoint: "moderation",
    model: call.target.modelId,
    provider: call.target.provider,
    attempts: 1,
    inputTokens: u.inputTokens || 0,
    outputTokens: u.outputTokens || 0,
    cacheReadTokens: u.cacheReadTokens ?? 0,
    cacheWriteTokens: u.cacheWriteTokens ?? 0,
    reasoningTokens: u.reasoningTokens ?? 0,
    images: 0,
    videoSeconds: 0,
    searchUnits: 0,
    webSearches: 0,
    costUsd: cost.usd,
    costPico: cost.pico,
    latencyMs: Math.round(call.latencyMs * 10) / 10,
    ttftMs: null,
    status: call.error ? call.error.status : 200,
    outcome: call.error ? "error" : "ok",
    sandbox: auth.sandbox,
    estimated: call.estimated,
  };
  if (guardrail) entry.guardrail = guardrail;
  return entry;
}
