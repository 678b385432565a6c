// What a stored response keeps when a step between the client and the provider changes the text on its way (the
// guardrails' redaction and output rules): that step runs around the endpoint, so the record would otherwise be made
// from what the provider saw and answered — placeholders the client never sent, values an output rule masked for the
// client, an answer the client was refused. The step says per request how the record keeps its parts; a request no
// such step changes keeps them as they are (one map read). A verdict the step can only give after the record is
// kept (output moderation judges the whole answer, after the endpoint saved it) takes the record back.
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

const views = new WeakMap<GatewayContext, StoredView>();
const takeBacks = new WeakMap<GatewayContext, () => Promise<void>>();
const historyOnly = new WeakSet<GatewayContext>();

/**
 * From the changing step, before the request goes on: its record is kept through `view`. `byHistory`: the step gives
 * the text stand-ins that mean something within one request only (the guardrails' numbered placeholders), so this
 * request continues a chain by the history as kept, never by id from a native upstream's own copy, which holds an
 * earlier request's stand-ins (its [EMAIL_1] would be read as this request's).
 */
export function keepStoredThrough(ctx: GatewayContext, view: StoredView, byHistory = false): void {
  views.set(ctx, view);
  if (byHistory) historyOnly.add(ctx);
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

/** From the endpoint, once the record kept through a view is saved: how to take it back (nothing without a view). */
export function keptAs(ctx: GatewayContext, takeBack: () => Promise<void>): void {
  if (views.has(ctx)) takeBacks.set(ctx, takeBack);
}

/**
 * From the changing step, when it refuses the answer after its record was kept (output moderation): the record is
 * taken back, as if the view had refused it, so no GET or later turn reads what the client was refused.
 */
export async function refuseKept(ctx: GatewayContext): Promise<void> {
  const takeBack = takeBacks.get(ctx);
  takeBacks.delete(ctx);
  views.set(ctx, () => undefined); // a save still to come (none today) keeps nothing either
  await takeBack?.();
}
