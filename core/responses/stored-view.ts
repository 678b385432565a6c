// What a stored response keeps when a step between the client and the provider changes the text on its way (the
// guardrails' redaction and output rules): that step runs around the endpoint, so the record would otherwise be made
// from what the provider saw and answered — placeholders the client never sent, values an output rule masked for the
// client, an answer the client was refused. The step says per request how the record keeps its parts, and may give a
// verdict on the whole answer (output moderation) the endpoint awaits before it saves: a refused answer is never
// written, and nothing is readable by its id while the verdict is out. A request no such step changes keeps its parts
// as they are (one map read) and is saved at once.
import type { GatewayContext } from "../pipeline/context.ts";
import type { Item } from "./conversation.ts";

/** The parts of a record the view decides. */
export interface KeptParts {
  response: Record<string, unknown>;
  /** The output with the reasoning state the client may not have been shown (persist.ts, FULL). */
  fullOutput?: Item[];
  /** The conversation's input items (the earlier turns' included). */
  input: Item[];
}

/** How one request's record keeps its parts; undefined from it: the answer is refused, nothing is kept. */
export type StoredView = (parts: KeptParts) => KeptParts | undefined;

/**
 * The step's verdict on the whole answer (the final response, as the provider gave it), which it can only give once
 * the answer is made: true, the record may be saved; false, the answer is refused (the step tells the client so).
 */
export type AnswerVerdict = (response: Record<string, unknown>) => Promise<boolean>;

const views = new WeakMap<GatewayContext, StoredView>();
const verdicts = new WeakMap<GatewayContext, AnswerVerdict>();
const historyOnly = new WeakSet<GatewayContext>();

/**
 * From the changing step, before the request goes on: its record is kept through `view`, and saved only once
 * `verdict` (when given) allows it. `byHistory`: the step gives the text stand-ins that mean something within one
 * request only (the guardrails' numbered placeholders), so this request continues a chain by the history as kept,
 * never by id from a native upstream's own copy, which holds an earlier request's stand-ins (its [EMAIL_1] would be
 * read as this request's).
 */
export function keepStoredThrough(ctx: GatewayContext, view: StoredView, byHistory = false, verdict?: AnswerVerdict): void {
  views.set(ctx, view);
  if (byHistory) historyOnly.add(ctx);
  if (verdict) verdicts.set(ctx, verdict);
}

/** Whether this request must continue a chain by the history as kept (see keepStoredThrough). */
export function continuesByHistory(ctx: GatewayContext): boolean {
  return historyOnly.has(ctx);
}

/** The parts as this request's record keeps them (the same objects when no step asked); undefined: keep nothing. */
export function keptParts(ctx: GatewayContext, parts: KeptParts): KeptParts | undefined {
  const view = views.get(ctx);
  return view ? view(parts) : parts;
}

/** From the endpoint, before it saves the final response: whether the step's verdict allows it (true at once without one). */
export function answerAllowed(ctx: GatewayContext, response: Record<string, unknown>): boolean | Promise<boolean> {
  const verdict = verdicts.get(ctx);
  return verdict ? verdict(response) : true;
}
