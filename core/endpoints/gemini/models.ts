// GET /api/v1beta/models and /api/v1beta/models/{model}: the catalog in the Gemini API's Model shape, for the Gemini
// SDKs' models.list() / models.get() (and clients that check a model before using it). Only models this protocol can
// call are listed: language models (generateContent, streamGenerateContent, countTokens) and embedding models
// (embedContent, batchEmbedContents). `name` is `models/<creator>/<slug>`, which the SDKs pass back as it is.
import type { EndpointSpec } from "../spec.ts";
import type { GatewayContext } from "../../pipeline/context.ts";
import type { ModelRuntime } from "../../config/runtime.ts";
import { GatewayError, invalidRequest } from "../../errors.ts";
import { resolveGeminiModel } from "./model-name.ts";
import { fullyRetired, liveEndpoints, retiredEndpoint, retiredModelError } from "../../config/retirement.ts";

const METHODS: Partial<Record<ModelRuntime["type"], string[]>> = {
  language: ["generateContent", "streamGenerateContent", "countTokens"],
  embedding: ["embedContent", "batchEmbedContents"],
};
const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

export function geminiModel(m: ModelRuntime): Record<string, unknown> {
  const c = m.config;
  // The limits of an endpoint that still serves, not of one retired (core/config/retirement.ts).
  const ep = liveEndpoints(m, Date.now())[0];
  const out: Record<string, unknown> = {
    name: `models/${m.id}`,
    baseModelId: m.id,
    version: c.released ? new Date(c.released * 1000).toISOString().slice(0, 10) : "1",
    displayName: c.name ?? m.id,
    description: c.description ?? "",
    inputTokenLimit: c.context_window ?? ep?.context_window ?? 0,
    outputTokenLimit: c.max_tokens ?? ep?.max_tokens ?? 0,
    supportedGenerationMethods: METHODS[m.type] ?? [],
  };
  if (m.type === "language") out.thinking = (c.tags ?? []).includes("reasoning");
  return out;
}

function queryOf(path: string): URLSearchParams {
  const q = path.indexOf("?");
  return new URLSearchParams(q === -1 ? "" : path.slice(q + 1));
}

/** pageToken is the offset of the next page, opaque to clients (base64url). */
function list(ctx: GatewayContext): void {
  const q = queryOf(ctx.path);
  const size = q.has("pageSize") ? Number(q.get("pageSize")) : DEFAULT_PAGE;
  if (!Number.isInteger(size) || size < 0) throw invalidRequest("pageSize must be a whole number", "pageSize");
  const token = q.get("pageToken");
  const offset = token ? Number(Buffer.from(token, "base64url").toString("utf8")) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw invalidRequest("pageToken is not one this server gave out", "pageToken");
  const now = Date.now();
  // A model whose every endpoint has retired is gone, as from GET /v1/models.
  const all = [...ctx.config.models.values()].filter((m) => METHODS[m.type] && !fullyRetired(m, now));
  const page = all.slice(offset, offset + Math.min(size || DEFAULT_PAGE, MAX_PAGE));
  const next = offset + page.length;
  const body: Record<string, unknown> = { models: page.map(geminiModel) };
  if (next < all.length) body.nextPageToken = Buffer.from(String(next)).toString("base64url");
  ctx.response = { kind: "json", status: 200, body };
}

function get(ctx: GatewayContext, raw: string): void {
  const id = resolveGeminiModel(raw, ctx.config.models);
  const m = ctx.config.models.get(id);
  if (!m || !METHODS[m.type]) {
    throw new GatewayError(404, "MODEL_NOT_FOUND", `Model "${id}" does not exist or is not served on the Gemini protocol (GET /api/v1beta/models lists those that are)`, { details: { field: "model", model: id } });
  }
  const now = Date.now();
  if (fullyRetired(m, now)) throw retiredModelError(m, retiredEndpoint(m, now)!, "model", now);
  ctx.model = m;
  ctx.response = { kind: "json", status: 200, body: geminiModel(m) };
}

async function modelsTerminal(ctx: GatewayContext): Promise<void> {
  const raw = ctx.params._;
  if (raw) get(ctx, raw);
  else list(ctx);
}

export const geminiModelsEndpoints: EndpointSpec[] = [
  {
    kind: "models",
    method: "GET",
    route: "/api/v1beta/models",
    protocol: "gemini",
    terminal: modelsTerminal,
    openapi: {
      operationId: "gemini_list_models",
      summary: "List the models callable on the Gemini protocol, in the Gemini API's Model shape (paged)",
      responseSchema: "GeminiModelList",
      query: [
        // As Google's: a larger pageSize is taken and a page holds at most MAX_PAGE models.
        { name: "pageSize", schema: { type: "integer", minimum: 0 }, description: `Models per page: ${DEFAULT_PAGE} when unset or 0, at most ${MAX_PAGE} whatever is asked` },
        { name: "pageToken", schema: { type: "string" }, description: "nextPageToken of the previous page" },
      ],
      tag: "Gemini",
    },
  },
  {
    kind: "models",
    method: "GET",
    route: "/api/v1beta/models/**",
    protocol: "gemini",
    terminal: modelsTerminal,
    openapi: { operationId: "gemini_get_model", summary: "One model in the Gemini API's Model shape (`models/{creator}/{slug}`, or a bare slug)", responseSchema: "GeminiModel", tag: "Gemini" },
  },
];
