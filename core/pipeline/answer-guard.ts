// A step that checks what a request sends and what it gets back (guardrails) runs last, right before the provider, so
// that what it redacts is what leaves. A step before it that answers without going on (a response-cache hit) would
// pass it by. So the checking step offers its check here, for the config it is set up in, and an answering step makes
// its answer inside it: the check then sees that request and that answer as it sees a provider's.
// An answer kept for later (the response cache's) is handed over as it came back, before the check: a hit made inside
// the check then goes through what the miss went through, over the same answer, and sends what the miss sent. A request
// the check redacts is not kept or served at all (AnswerCheck.redacts).
import type { RuntimeConfig } from "../config/runtime.ts";
import type { GatewayContext, GatewayResponse } from "./context.ts";

/** What the check does to a request and its answer. */
export interface AnswerCheck {
  /**
   * It redacts (a `redact` rule, on either side). Such an answer cannot be kept: raw, it holds what redaction keeps out
   * of stores; masked or with placeholders, other rules and the restoring of values cannot see on a hit what they saw.
   */
  redacts: boolean;
  /** It edits the answer in place (a stream's events, text held back by the output rules): a kept one is copied. */
  edits: boolean;
}

/**
 * Runs `answer` (which sets ctx.response) inside the check, as the step's own handle runs next(): what it refuses is
 * thrown, what it changes in the answer is in ctx.response once it returns (a stream's check runs as it is read).
 */
export type AnswerGuard = ((answer: () => Promise<void>) => Promise<void>) & AnswerCheck;

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

const around = new WeakMap<GatewayContext, AnswerCheck>();

/** From the checking step as its check wraps the rest of the request (it then checks what any later step answers). */
export function checkingAround(ctx: GatewayContext, check: AnswerCheck): void {
  around.set(ctx, check);
}

/** The check already wrapping this request (placed before the calling step); undefined: none. */
export function checkAround(ctx: GatewayContext): AnswerCheck | undefined {
  return around.get(ctx);
}

/** Sees the answer before the check (returns the answer to check: a stream it records, wrapped). */
export type AnswerTap = (answer: GatewayResponse) => GatewayResponse;

const taps = new WeakMap<GatewayContext, AnswerTap>();

/** From a step before the check that keeps the answer: it is handed the answer before the check reads it. */
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
