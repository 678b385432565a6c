// A step that checks what a request sends and what it gets back (guardrails) runs last, right before the provider, so
// that what it redacts is what leaves. A step before it that answers without going on (a response-cache hit) would
// pass it by. So the checking step offers its check here, for the config it is set up in, and an answering step makes
// its answer inside it: the check then sees that request and that answer as it sees a provider's.
// An answer kept for later (the response cache's) is kept as it came back, before the check changed it: the check
// restores this request's redacted values into it and applies the output rules, so what it sends is this request's
// own; a hit made inside the check gets the same done with its own values, as the miss did.
import type { RuntimeConfig } from "../config/runtime.ts";
import type { GatewayContext, GatewayResponse } from "./context.ts";

/**
 * Runs `answer` (which sets ctx.response) inside the check, as the step's own handle runs next(): what it refuses is
 * thrown, what it changes in the answer is in ctx.response once it returns (a stream's check runs as it is read).
 * `redacts`: what the check rewrites in the request before it leaves (its input redactions; undefined: nothing). A
 * request rewritten otherwise is another question to the provider, so an answer kept under other redactions (whose
 * placeholders this request never handed out) is not its answer.
 */
export type AnswerGuard = ((answer: () => Promise<void>) => Promise<void>) & { redacts?: string };

/**
 * The check for one request; undefined when it has nothing to check on it (no guardrails for its project, its
 * endpoint unguarded, or the check already ran on it: placed before the answering step), and the answer is made as is.
 */
export type AnswerGuards = (ctx: GatewayContext) => AnswerGuard | undefined;

const offered = new WeakMap<RuntimeConfig, AnswerGuards>();

/** From the checking step's setup: its check, for requests on `config`. */
export function offerAnswerGuard(config: RuntimeConfig, guards: AnswerGuards): void {
  offered.set(config, guards);
}

/** The check an answer made without a provider goes through on this request; undefined: none. */
export function answerGuard(ctx: GatewayContext): AnswerGuard | undefined {
  return offered.get(ctx.config)?.(ctx);
}

/** Sees the provider's answer before the check (returns the answer to check: a stream it records, wrapped). */
export type AnswerTap = (answer: GatewayResponse) => GatewayResponse;

const taps = new WeakMap<GatewayContext, AnswerTap>();

/** From a step before the check that keeps the answer: it is handed the answer before the check changes it. */
export function tapAnswerBeforeCheck(ctx: GatewayContext, tap: AnswerTap): void {
  taps.set(ctx, tap);
}

/** From the checking step, with the answer it is about to check: what it checks (the tap's, if a step asked). */
export function answerBeforeCheck(ctx: GatewayContext, answer: GatewayResponse): GatewayResponse {
  const tap = taps.get(ctx);
  if (!tap) return answer;
  taps.delete(ctx);
  return tap(answer);
}
