// The catalog in the Anthropic Models API's shape, for the clients that send anthropic-version (the Anthropic SDK's
// models.list / models.retrieve, Claude Code's gateway model discovery): ModelInfo entries and its cursor paging
// (limit, after_id, before_id -> has_more, first_id, last_id). The catalog's own order is kept.
import type { GatewayContext } from "../pipeline/context.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import { invalidRequest } from "../errors.ts";
import { modelEntry } from "./models-view.ts";

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** Whether the request is an Anthropic client's: every Anthropic SDK and Claude Code send anthropic-version. */
export function wantsAnthropicShape(ctx: GatewayContext): boolean {
  const v = ctx.headers["anthropic-version"];
  return typeof v === "string" && v !== "";
}

/**
 * A catalog request of an Anthropic client: its answers, errors included (a bad cursor, an unknown model, a refused
 * key), go in Anthropic's envelope with request-id, from which its SDK raises its own classes and reads requestID.
 */
export function anthropicCatalog(ctx: GatewayContext): boolean {
  return ctx.endpoint === "models" && wantsAnthropicShape(ctx);
}

/** An Anthropic client's answer carries request-id, as its errors do: the SDK's _request_id / request_id is read there. */
export function tagAnthropicAnswer(ctx: GatewayContext): void {
  ctx.responseHeaders["request-id"] = ctx.requestId;
}

/**
 * Whether a model is in the Anthropic-shaped catalog: Anthropic's Models API lists what its Messages API serves, so
 * language models only (an embedding or rerank model, which /v1/messages refuses, cannot be told apart in that shape).
 * The list, its cursors and retrieve all go by it, so an id one of them leaves out the others do too.
 */
export function anthropicListed(m: ModelRuntime): boolean {
  return m.type === "language";
}

/** One model as Anthropic's ModelInfo (RFC 3339 created_at from the catalog's Unix seconds). */
export function anthropicModel(m: ModelRuntime) {
  // The same values as the catalog's own entry; a limit it does not know (0 there) is null, as Anthropic has it.
  const e = modelEntry(m);
  return {
    type: "model" as const,
    id: e.id,
    display_name: e.name,
    created_at: new Date(e.created * 1000).toISOString().replace(/\.000Z$/, "Z"),
    max_input_tokens: e.context_window || null,
    max_tokens: e.max_tokens || null,
  };
}

function queryOf(path: string): URLSearchParams {
  const q = path.indexOf("?");
  return new URLSearchParams(q === -1 ? "" : path.slice(q + 1));
}

/**
 * The index of a cursor's model in the listed models: a cursor naming no listed model is the client's mistake, said
 * as such; one naming a catalog model this list leaves out says why, rather than that the catalog lacks it.
 */
function cursorAt(listed: ModelRuntime[], catalog: ModelRuntime[], id: string, field: string): number {
  const at = listed.findIndex((m) => m.id === id);
  if (at !== -1) return at;
  const left = catalog.find((m) => m.id === id);
  if (left) throw invalidRequest(`${field}: "${id}" is not a language model: the Anthropic-shaped list (anthropic-version sent) leaves it out, so it cannot be a cursor there`, field);
  throw invalidRequest(`${field}: no model "${id}" in the catalog (GET /api/v1/models lists the catalog)`, field);
}

/**
 * One page of the listed models of `catalog`: after after_id (or from the start), or the `limit` models just before
 * before_id.
 */
export function anthropicModelPage(ctx: GatewayContext, catalog: ModelRuntime[]) {
  const all = catalog.filter(anthropicListed);
  const q = queryOf(ctx.path);
  const rawLimit = q.get("limit");
  const limit = rawLimit === null || rawLimit === "" ? DEFAULT_LIMIT : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw invalidRequest(`limit must be a whole number from 1 to ${MAX_LIMIT}`, "limit");
  const after = q.get("after_id") || undefined;
  const before = q.get("before_id") || undefined;
  if (after !== undefined && before !== undefined) throw invalidRequest("after_id and before_id cannot both be given", "before_id");
  let start: number;
  let end: number;
  let hasMore: boolean;
  if (before !== undefined) {
    end = cursorAt(all, catalog, before, "before_id");
    start = Math.max(0, end - limit);
    hasMore = start > 0;
  } else {
    start = after !== undefined ? cursorAt(all, catalog, after, "after_id") + 1 : 0;
    end = Math.min(all.length, start + limit);
    hasMore = end < all.length;
  }
  const data = all.slice(start, end).map(anthropicModel);
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
