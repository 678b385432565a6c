// Stored Responses API state around POST /api/v1/responses, and the routes that read it: GET and DELETE
// /api/v1/responses/{id} (GET ?stream=true replays it as events), GET /api/v1/responses/{id}/input_items. Records live in gateway.store.responses, per
// project and kind of key (another project's id, or a live key's to a sandbox key and the other way round, is a 404
// like an unknown one; core/responses/owner.ts), until store.responses_retention_days have passed.
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";
import { GatewayError, invalidRequest } from "../errors.ts";
import { upstreamProtocolOf } from "../contracts/translator.ts";
import type { ProviderResult } from "../contracts/provider.ts";
import { buildConversation } from "../responses/conversation.ts";
import { responseOwner } from "../responses/owner.ts";
import { gatewayRunsMcp } from "../responses/mcp-loop.ts";
import { checkConversationSize, DEFAULT_MAX_CONVERSATION_BYTES } from "../responses/conversation-limit.ts";
import { nativeRebuilt, sameUpstreamRebuilt, upstreamLostItem, upstreamLostPrevious } from "../responses/native-history.ts";
import { deleteAtUpstream, deleteUpstreamCopy, madeWithProjectKey } from "../responses/upstream-delete.ts";
import { persistJson, persistStream, type SaveTarget } from "../responses/persist.ts";
import { pageOf } from "../responses/input-items.ts";
import { replayEvents } from "../responses/replay-events.ts";
import { paced } from "../responses/replay-pace.ts";
import { COMPACT_ROUTE, compactNotServed, compactOpenApi } from "./responses-compact.ts";
import { answerAllowed, continuesByHistory, keptParts } from "../responses/stored-view.ts";
import type { ResponseRecord } from "../store/responses-types.ts";
import { jsonInSlices } from "../store/responses-slices.ts";

const DAY_MS = 86_400_000;

export function retentionMs(ctx: GatewayContext): number {
  return (ctx.config.raw.store?.responses_retention_days ?? 30) * DAY_MS;
}

/**
 * POST /responses with state: rebuild the conversation (previous_response_id, item_reference), run `dispatch`, then
 * stamp and save the answer. The body each attempt sees is chosen per attempt: a native attempt on the provider that
 * served the previous response natively keeps previous_response_id (the upstream holds that state itself, encrypted
 * reasoning included), and gets the rebuilt conversation at once when that upstream has lost it; every other attempt,
 * a fallback included, gets the rebuilt conversation. When the gateway runs the mcp tool, every attempt gets the
 * rebuilt conversation as the loop's current turn left it (its tools as functions, its results): continued by id,
 * the upstream would see neither, and each turn would stack its own response on the chain.
 */
export async function serveWithState(ctx: GatewayContext, dispatch: () => Promise<void>): Promise<void> {
  const store = ctx.gateway.store.responses;
  const owner = responseOwner(ctx);
  const project = owner.project;
  const conv = await buildConversation(store, owner, ctx.body, Date.now());
  const previous = conv.previous;
  const keep = conv.passthrough.store !== false;
  const inputBytes = await checkConversationSize(conv, keep, ctx.config.raw.store?.responses_max_conversation_bytes ?? DEFAULT_MAX_CONVERSATION_BYTES);
  ctx.body = conv.rebuilt;
  const loop = gatewayRunsMcp(ctx);
  // Per attempt: which body, and whether it went to the upstream's own /responses (what the record says it was).
  const native = new WeakMap<object, boolean>();
  const inner = ctx.invoke;
  // The request's body as the mcp loop's latest turn left it (else the rebuilt one), and the bodies made from it for
  // attempts: a body in ctx.body that is not one of those is a new turn's.
  let current: any = conv.rebuilt;
  const made = new WeakSet<object>();
  const use = (body: any) => {
    if (body !== current) made.add(body);
    ctx.body = body;
  };
  ctx.invoke = (c, driver, op, target, call) => {
    if (!made.has(ctx.body)) current = ctx.body;
    const isNative = upstreamProtocolOf(driver, "responses", target) === "responses";
    native.set(target, isNative);
    if (previous) {
      const sameUpstream = isNative && previous.native && target.provider === previous.provider;
      // What the transcoder plugin does not take, dispatch would send to the driver's own /responses.
      const send = (): Promise<ProviderResult> => inner?.(c, driver, op, target, call) ?? driver.responses!.call(driver, ctx.body, target, call);
      // The upstream lost the earlier turns (its retention, a zero-retention org, a key moved): the whole history
      // as kept, without what only its copy could resolve, as any other native upstream gets it.
      const orWithoutItsState = (lost: (e: unknown) => boolean) => (e: unknown) => {
        if (!lost(e)) throw e;
        use(nativeRebuilt(current));
        return send();
      };
      if (!isNative) use(current);
      else if (sameUpstream && (loop || continuesByHistory(ctx))) {
        use(sameUpstreamRebuilt(current));
        return send().catch(orWithoutItsState(upstreamLostItem));
      } else if (sameUpstream) {
        use(conv.passthrough);
        return send().catch(orWithoutItsState(upstreamLostPrevious));
      } else use(nativeRebuilt(current));
    }
    return inner?.(c, driver, op, target, call);
  };
  await dispatch();

  const response = ctx.response;
  if (!response || response.status !== 200) return;
  const servedNatively = () => !loop && !!ctx.resolvedTarget && native.get(ctx.resolvedTarget) === true;
  const t: SaveTarget = {
    previousResponseId: previous?.id ?? null,
    save: keep
      ? async (r, fullOutput) => {
          // As a step that changed the text on its way (guardrails) has it kept, once its verdict on the whole answer
          // (output moderation) is known: an answer it refused is never written, nor readable by id meanwhile.
          const kept = keptParts(ctx, { response: r, input: conv.items, ...(fullOutput ? { fullOutput } : {}) });
          if (!kept || !(await answerAllowed(ctx, r))) {
            if (servedNatively()) forgetUpstreamCopy(ctx, String(r.id));
            return false;
          }
          // Serialised here, a slice at a time, not in the store: its put is bounded by store.timeout_ms.
          const inputJson = await jsonInSlices(kept.input);
          const now = Date.now();
          const rec: ResponseRecord = {
            id: String(r.id), project, createdAt: now, expiresAt: now + retentionMs(ctx), response: kept.response, input: kept.input, inputJson,
            ...(inputBytes === undefined || kept.input !== conv.items ? {} : { inputBytes }),
            ...(kept.fullOutput ? { fullOutput: kept.fullOutput } : {}),
            provider: ctx.resolvedProvider ?? "", model: ctx.model?.id ?? "", native: servedNatively(),
            ...(servedNatively() ? { projectKey: madeWithProjectKey(ctx) } : {}),
            ...(owner.sandbox ? { sandbox: true } : {}),
            previousResponseId: previous?.id ?? null,
          };
          // The answer is already made (and billed): a store failure is not turned into an error, but the answer
          // says store: false, so the client knows a previous_response_id or GET of it will find nothing.
          return store.put(rec).then((saved) => {
            // Another project's or kind of key's record holds the id (an upstream that repeated it): that one stays,
            // this one is not kept, and the answer says store: false without saying whose the id is.
            if (!saved) ctx.gateway.log.warn("the response id is another project's or kind of key's stored response: this one was not kept, the answer says store: false", { requestId: ctx.requestId, response: rec.id, project, sandbox: owner.sandbox });
            return saved;
          }, (err) => {
            ctx.gateway.log.error("storing the response failed: the answer says store: false", { requestId: ctx.requestId, response: rec.id, error: String(err) });
            return false;
          });
        }
      : null,
  };
  if (response.kind === "json") await persistJson(response.body, t);
  else if (response.kind === "stream") ctx.response = { ...response, events: persistStream(response.events, t) };
}

/** How long deleting a refused answer's copy at its upstream may take (it runs on no client's time). */
const FORGET_DEADLINE_MS = 15_000;

/**
 * A refused answer a native upstream served: its own copy (store: true there too) is deleted as DELETE does, best
 * effort. In the background, on a deadline of its own: the refusal goes out without waiting for it (nor holds the
 * connection, the budget hold or the concurrency slot meanwhile), and a client that left does not cancel it. A copy
 * left is logged: the upstream keeps it for its own retention (OpenAI: 30 days); nothing of it is kept here.
 */
function forgetUpstreamCopy(ctx: GatewayContext, id: string): void {
  // What deleteAtUpstream reads of a record: the id, and who served it.
  const served = { id, provider: ctx.resolvedProvider ?? "", model: ctx.model?.id ?? "", projectKey: madeWithProjectKey(ctx) } as ResponseRecord;
  deleteAtUpstream(ctx, served, AbortSignal.timeout(FORGET_DEADLINE_MS)).catch((err: unknown) => {
    ctx.gateway.log.error("a refused response's copy at the upstream that served it natively was not deleted: that upstream keeps it for its own retention", {
      requestId: ctx.requestId, response: id, provider: served.provider, error: err instanceof Error ? err.message : String(err),
    });
  });
}

function notFound(id: string): GatewayError {
  return new GatewayError(404, "NOT_FOUND", `Response with id "${id}" not found (unknown, expired, deleted, stored by another project or with the other kind of key (live or sandbox), or created with store: false)`, {
    details: { response_id: id },
  });
}

async function lookup(ctx: GatewayContext): Promise<ResponseRecord> {
  const id = ctx.params.id ?? "";
  const rec = await ctx.gateway.store.responses.get(responseOwner(ctx), id, Date.now());
  if (!rec) throw notFound(id);
  return rec;
}

/** A listed item as a client sees it: reasoning state (encrypted_content) is replayed upstream, not listed. */
function shown(item: Record<string, unknown>): Record<string, unknown> {
  if (item.type !== "reasoning" || !("encrypted_content" in item)) return item;
  const { encrypted_content: _hidden, ...rest } = item;
  return rest;
}

/** The routes share one kind; the method and the path's last segment pick the answer. */
export async function responsesStateTerminal(ctx: GatewayContext): Promise<void> {
  const path = ctx.path.split("?")[0]!.replace(/\/+$/, "");
  if (ctx.method === "POST") throw compactNotServed(); // the only POST among them (responses-compact.ts)
  if (ctx.method === "DELETE") {
    const id = ctx.params.id ?? "";
    // A response served natively has a copy at its upstream: that goes first (core/responses/upstream-delete.ts).
    const rec = await lookup(ctx);
    if (rec.native) await deleteUpstreamCopy(ctx, rec);
    if (!(await ctx.gateway.store.responses.delete(responseOwner(ctx), id, Date.now()))) throw notFound(id);
    ctx.response = { kind: "json", status: 200, body: { id, object: "response.deleted", deleted: true } };
    return;
  }
  const rec = await lookup(ctx);
  const query = new URLSearchParams(ctx.path.includes("?") ? ctx.path.slice(ctx.path.indexOf("?") + 1) : "");
  if (path.endsWith("/input_items")) {
    ctx.response = { kind: "json", status: 200, body: pageOf(rec.input.map(shown), query) };
    return;
  }
  // include=reasoning.encrypted_content (the SDK sends include[]=…): the output with the reasoning state, as on create.
  const include = [...query.getAll("include"), ...query.getAll("include[]")];
  const body = include.includes("reasoning.encrypted_content") && rec.fullOutput ? { ...rec.response, output: rec.fullOutput } : rec.response;
  const replay = replayWanted(query);
  if (replay) {
    // stream=true (the SDK's retrieve(id, {stream: true}), responses.stream({response_id})): the response as the
    // events that make it, from after starting_after (core/responses/replay-events.ts), each made as the writer
    // takes it, paced so back-pressure and a client that left are seen (core/responses/replay-pace.ts).
    ctx.response = { kind: "stream", status: 200, events: paced(replayEvents(body, replay.startingAfter)) };
    return;
  }
  ctx.response = { kind: "json", status: 200, body };
}

/** ?stream=true, and the sequence number to start after (-1: from the first event); undefined for the JSON answer. */
function replayWanted(query: URLSearchParams): { startingAfter: number } | undefined {
  const stream = query.get("stream");
  if (stream === null || stream === "false") return undefined;
  if (stream !== "true") throw invalidRequest(`stream must be true or false, not "${stream}"`, "stream");
  const raw = query.get("starting_after");
  if (raw === null || raw === "") return { startingAfter: -1 };
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw invalidRequest(`starting_after must be a sequence number (a whole number from 0), not "${raw}"`, "starting_after");
  return { startingAfter: n };
}

const base = { kind: "responses_state", protocol: "responses", terminal: responsesStateTerminal } as const;

export const responsesStateEndpoints: EndpointSpec[] = [
  // Before /responses/:id, which would take the path for an id.
  { ...base, method: "POST", route: COMPACT_ROUTE, openapi: compactOpenApi },
  {
    ...base,
    method: "GET",
    route: "/api/v1/responses/:id",
    openapi: {
      operationId: "get_response",
      summary: "Retrieve a stored response (created with store: true, within the retention period)",
      responseSchema: "ResponseObject",
      tag: "Inference",
      query: [
        { name: "include", schema: { type: "array", items: { type: "string", enum: ["reasoning.encrypted_content"] } }, description: "reasoning.encrypted_content: reasoning items with their state" },
        { name: "stream", schema: { type: "boolean", default: false }, description: "true: the stored response replayed as the Responses stream events that make it (response.created … its terminal event), numbered from 0 the same on every replay" },
        { name: "starting_after", schema: { type: "integer", minimum: 0 }, description: "With stream=true: only the events after this sequence number" },
      ],
      streamSchema: "ResponseStreamEvent",
      namedEvents: true,
    },
  },
  {
    ...base,
    method: "DELETE",
    route: "/api/v1/responses/:id",
    openapi: { operationId: "delete_response", summary: "Delete a stored response (one served natively: the upstream's copy first; 502 while that fails)", responseSchema: "ResponseDeleted", tag: "Inference" },
  },
  {
    ...base,
    method: "GET",
    route: "/api/v1/responses/:id/input_items",
    openapi: {
      operationId: "list_response_input_items",
      summary: "List the input items of a stored response (the whole conversation it was made from), paginated",
      responseSchema: "ResponseInputItemList",
      tag: "Inference",
      query: [
        { name: "limit", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 }, description: "Items per page" },
        { name: "order", schema: { type: "string", enum: ["asc", "desc"], default: "desc" }, description: "desc: most recent first" },
        { name: "after", schema: { type: "string" }, description: "An item id: list the items after it" },
      ],
    },
  },
];
