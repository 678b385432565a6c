// A step that checks what a request sends and what it gets back (guardrails) runs last, right before the provider, so
// that what it redacts is what leaves. A step before it that answers without going on (a response-cache hit) would
// pass it by. So the checking step offers its check here, for the config it is set up in, and an answering step makes
// its answer inside it: the check then sees that request and that answer as it sees a provider's.
import type { RuntimeConfig } from "../config/runtime.ts";
import type { GatewayContext } from "./context.ts";

/**
 * Runs `answer` (which sets ctx.response) inside the check, as the step's own handle runs next(): what it refuses is
 * thrown, what it changes in the answer is in ctx.response once it returns (a stream's check runs as it is read).
 */
export type AnswerGuard = (answer: () => Promise<void>) => Promise<void>;

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
