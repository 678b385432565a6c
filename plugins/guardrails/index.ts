// guardrails: a project's checks on what it sends to models and what comes back (docs/guardrails.md), on every client
// protocol (chat completions, messages, responses, the Gemini API), JSON and streamed. Rules (built-in PII and secret
// detectors, patterns, keyword topics) block, redact (reversible placeholders or masks) or flag; a moderation model
// judges the latest user turn and, if asked, the answer. A project without `guardrails:` costs one property read.
//
// It runs last, right before the provider is called: what it redacts is what leaves, and the answer it checks is the
// client's protocol (translation is done by then), inside usage metering, so a refused answer is billed as used and
// its ledger record says which rule refused it. An answer made before it without a provider (a response-cache hit)
// is made inside it too (core/pipeline/answer-guard.ts): a hit is checked as a miss is. An answer kept for later is
// handed over before the check, as it came back (a request this redacts is never kept). A stored Responses record is
// kept as the client is given it, redacted values masked (stored.ts).
import { definePlugin } from "../../core/pipeline/define.ts";
import type { EndpointKind, GatewayContext } from "../../core/pipeline/context.ts";
import { meterFor } from "../../core/metering/meter.ts";
import { guardFor, type Guard } from "./compile.ts";
import { GuardRun } from "./check.ts";
import { actionCounter } from "./record.ts";
import { walkRequest } from "./walk/request.ts";
import { responsesEchoed, walkAnswer } from "./walk/answer.ts";
import { fixCitations } from "./walk/citations.ts";
import { citedOutput, type TextMoves } from "./moves.ts";
import { guardStream } from "./stream/index.ts";
import { checkModeration } from "./moderation/index.ts";
import { MAX_MODERATED_CHARS } from "./stream/slots.ts";
import { keepStoredThrough } from "../../core/responses/stored-view.ts";
import { moderatedAnswer, storedView, storedVerdict } from "./stored.ts";
import { refuseOpenAIConversation } from "./conversation-refusal.ts";
import { answerBeforeCheck, checkAround, checkingAround, offerAnswerGuard } from "../../core/pipeline/answer-guard.ts";

const GUARDED: ReadonlySet<EndpointKind> = new Set(["chat", "messages", "responses", "gemini", "count_tokens"]);

async function guarded(ctx: GatewayContext, guard: Guard, next: () => Promise<void>): Promise<void> {
  refuseOpenAIConversation(ctx, guard);
  const run = new GuardRun(ctx, guard);
  // A refusal is a ledger record even in a pipeline without usage-metering or budget (commit runs once).
  ctx.onFinish((outcome) => (ctx.guardrail?.blocked ? meterFor(ctx).commit(outcome) : undefined));
  const moderate = guard.moderateInput && ctx.endpoint !== "count_tokens";
  let turn = "";
  if (guard.input.length || moderate) {
    walkRequest(ctx.protocol, ctx.body, (text, topic, doc) => {
      const out = doc === undefined ? run.input(text, topic) : run.inputDocument(text, topic, doc);
      if (moderate && topic && turn.length < MAX_MODERATED_CHARS) turn += (turn ? "\n" : "") + out.slice(0, MAX_MODERATED_CHARS - turn.length);
      return out;
    });
    run.allowVerdict("input");
    if (moderate) await checkModeration(ctx, guard.moderation!, turn, "input");
  }
  // A stored response is made inside this check: it keeps what the client is given, values a rule took out as masks.
  // Its placeholders are numbered per request: a chain is continued by that history, not by a native upstream's copy.
  // One moderating answers is saved only once that verdict is known (a refused answer is never written).
  if (ctx.endpoint === "responses" && (guard.redacts || guard.output.length || guard.moderateOutput)) {
    keepStoredThrough(ctx, storedView(run), guard.placeholders, guard.moderateOutput ? storedVerdict(ctx, run) : undefined);
  }
  await next();
  if (!ctx.response || ctx.response.status >= 300 || ctx.endpoint === "count_tokens") return;
  // A step before this one that keeps answers (the response cache) keeps this one as it came back, before the check.
  const r = (ctx.response = answerBeforeCheck(ctx, ctx.response));
  if (!guard.output.length && !guard.moderateOutput && run.vault.size === 0 && run.documents.size === 0) return;
  if (r.kind === "stream") {
    ctx.response = { ...r, events: guardStream(ctx, run, r.events) };
    return;
  }
  if (r.kind !== "json") return;
  let answer = "";
  const visit = (text: string, moves?: TextMoves) => {
    if (guard.moderateOutput && answer.length < MAX_MODERATED_CHARS) answer += text.slice(0, MAX_MODERATED_CHARS - answer.length);
    return run.output(text, moves);
  };
  // Web sources (url_citation annotations) index into the text as the upstream wrote it: moved along with its edits.
  walkAnswer(ctx.protocol, r.body, visit, (text, annotations) => citedOutput(text, annotations, visit));
  if (ctx.protocol === "anthropic") fixCitations(r.body, run);
  if (ctx.protocol === "responses") responsesEchoed(r.body, (t) => run.restore(t));
  run.allowVerdict("output");
  if (guard.moderateOutput) await moderatedAnswer(ctx, run, answer);
}

/** The request's guard, or undefined when there is nothing to check (most projects: one property read). */
function guardOf(ctx: GatewayContext): Guard | undefined {
  const config = ctx.auth?.project.config.guardrails;
  // Once per request: a hit answered inside the guardrails placed before the cache is not checked twice.
  if (config === undefined || ctx.body === undefined || !GUARDED.has(ctx.endpoint) || checkAround(ctx)) return undefined;
  return guardFor(config) ?? undefined;
}

function run(ctx: GatewayContext, guard: Guard, next: () => Promise<void>): Promise<void> {
  checkingAround(ctx, guard);
  return guarded(ctx, guard, next);
}

/** What the cache learns of the check (whether it may keep the answer, whether a hit needs a copy), not the rules. */
const checkOf = (guard: Guard) => ({ redacts: guard.redacts, edits: guard.edits });

export default definePlugin({
  name: "guardrails",
  dependsOn: ["auth"],
  setup(gateway, _options, config) {
    actionCounter(gateway.metrics.registry);
    offerAnswerGuard(config, (ctx) => {
      const guard = guardOf(ctx);
      return guard ? Object.assign((answer: () => Promise<void>) => run(ctx, guard, answer), checkOf(guard)) : undefined;
    });
  },
  handle(ctx, next) {
    const guard = guardOf(ctx);
    return guard ? run(ctx, guard, next) : next();
  },
});
