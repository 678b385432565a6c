// A step that checks what a request sends and what it gets back (guardrails) runs last, right before the provider, so
// that what it redacts is what leaves. A step before it that answers without going on (a response-cache hit) would
// pass it by. So the checking step offers its check here, for the config it is set up in, and an answering step makes
// its answer inside it: the check then sees that request and that answer as it sees a provider's.
// An answer kept for later (the response cache's) is handed over once checked, before the check puts this request's
// redacted values back into it: the output rules applied (their masks in it, a refused answer never handed over), the
// input redaction's placeholders still in. A hit made inside the check then gets its own values restored, as the miss
// did, and what is kept never holds a value any rule redacted.
import type { RuntimeConfig } from "../config/runtime.ts";
import type { GatewayContext, GatewayResponse } from "./context.ts";

/** What the check does to a request and its answer. */
export interface AnswerCheck {
  /**
   * Its redact rules (canonical; undefined: none). A request rewritten otherwise is another question to the provider,
   * and an answer kept under other ones holds other masks and placeholders this request never handed out.
   */
  redacts?: string;
  /** It puts numbered placeholders in the request, in the order it walks the body (its members' order included). */
  placeholders: boolean;
  /** It edits the answer in place (masks, restored values, a stream's held text): an answer kept for later is copied. */
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

/**
 * Sees the answer once checked: output rules applied (an answer they refuse never reaches it; a stream they cut ends
 * with the refusal), placeholders not yet restored. `editedAfter`: the check edits it in place once the tap returns.
 * Returns the answer to go on with (a stream it records, wrapped).
 */
export type AnswerTap = (answer: GatewayResponse, editedAfter: boolean) => GatewayResponse;

const taps = new WeakMap<GatewayContext, AnswerTap>();

/** From a step that keeps the answer (before the check or inside it): it is handed the answer once checked. */
export function tapCheckedAnswer(ctx: GatewayContext, tap: AnswerTap): void {
  taps.set(ctx, tap);
}

/** From the checking step, about to check the answer: the tap a step asked for, once (undefined: none). */
export function takeAnswerTap(ctx: GatewayContext): AnswerTap | undefined {
  const tap = taps.get(ctx);
  if (tap) taps.delete(ctx);
  return tap;
}
