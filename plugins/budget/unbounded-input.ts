// Input the body does not bound, which the budget reserves up to the model's context window (worst-case.ts): a
// stored conversation or prompt the provider expands, server tools whose results the provider adds (web search
// included), media and files named by URL or id, which the upstream fetches and bills as input, and media carried
// inline, which it bills by what it shows rather than by its size (media-refs.ts). The refusal names which
// (refusal.ts): lowering the output limit does nothing about it.
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { usesServerTools } from "../../core/metering/server-tools.ts";
import { BY_REFERENCE, INLINE, mediaIn, namesMedia } from "./media-refs.ts";

/** Why a request's input is reserved beyond its body's size (details.reserved_input); request_body: it is not. */
export type ReservedInput = "stored_conversation" | "stored_prompt" | "server_tools" | "media_by_reference" | "inline_media"
  | "request_body";

/** The generations (whose output a limit bounds); media operations' input is their body. */
export const LANGUAGE: ReadonlySet<string> = new Set(["chat", "messages", "responses", "gemini"]);

type Asking = Pick<GatewayContext, "endpoint" | "body">;

/**
 * The field by which a Responses request continues what the provider keeps: a stored response or item, or a
 * conversation (`conversation`: its id, or `{ id }`).
 */
function continuedBy(ctx: Asking): "previous_response_id" | "conversation" | "item_reference" | undefined {
  if (ctx.endpoint !== "responses") return undefined;
  const body = ctx.body;
  if (body?.previous_response_id != null) return "previous_response_id";
  if (body?.conversation != null) return "conversation";
  if (Array.isArray(body?.input) && body.input.some((i: any) => i?.type === "item_reference")) return "item_reference";
  return undefined;
}

/** A Responses request naming a stored prompt (`prompt: { id }`, its text filled in upstream). */
const storedPrompt = (ctx: Asking) => ctx.endpoint === "responses" && ctx.body?.prompt != null;
const serverTools = (ctx: Asking) => LANGUAGE.has(ctx.endpoint) && usesServerTools(ctx.body, ctx.endpoint as "chat" | "messages" | "responses" | "gemini");
/** The media in a generation's conversation (media-refs.ts); `first`: stop at the first. */
const media = (ctx: Asking, first = false) => (LANGUAGE.has(ctx.endpoint) ? mediaIn(ctx.body, first) : 0);

/** Does the body's size not bound the input? (On every budgeted request: stops at the first reason.) */
export function unboundedInput(ctx: Asking): boolean {
  return continuedBy(ctx) !== undefined || storedPrompt(ctx) || serverTools(ctx) || media(ctx, true) !== 0;
}

/**
 * Is part of the input out of the gateway's sight when the budget runs: a stored conversation or prompt, media by URL
 * or id (its type is what the server says, whatever the URL looks like), Gemini cached content? Its kind is then
 * unknown too, audio included: worst-case.ts holds it at the dearest input price. Server tools add text; inline media
 * is seen (audio-parts.ts).
 */
export function unseenInput(ctx: Asking): boolean {
  return continuedBy(ctx) !== undefined || storedPrompt(ctx) || (LANGUAGE.has(ctx.endpoint) && namesMedia(ctx.body));
}

/** Every reason the input is reserved beyond the body's size, with the field a stored conversation is continued by. */
export function reservedInputs(ctx: Asking): { kinds: ReservedInput[]; continuedBy?: string } {
  const kinds: ReservedInput[] = [];
  const by = continuedBy(ctx);
  if (by) kinds.push("stored_conversation");
  if (storedPrompt(ctx)) kinds.push("stored_prompt");
  if (serverTools(ctx)) kinds.push("server_tools");
  const m = media(ctx);
  if (m & BY_REFERENCE) kinds.push("media_by_reference");
  if (m & INLINE) kinds.push("inline_media");
  if (!kinds.length) kinds.push("request_body");
  return { kinds, continuedBy: by };
}
