// The catalog: GET /api/v1/models, /api/v1/models/:creator/:model (or the id as one encoded segment, as the SDKs'
// models.retrieve sends it) and .../endpoints. Authenticated like every endpoint (they run through the pipeline with
// kind "models"); the terminal step builds the answer from the config snapshot and the live per-endpoint statistics.
import type { EndpointSpec } from "./spec.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { ModelRuntime } from "../config/runtime.ts";
import type { ModelEndpointConfig } from "../generated/types/gateway.ts";
import { GatewayError } from "../errors.ts";
import { fullyRetired, liveEndpoints, retiredEndpoint, retiredModelError } from "../config/retirement.ts";
import { statsOf } from "../stats/index.ts";
import { healthOf } from "../health/index.ts";
import { endpointEntry, modelDetail, modelEntry, architecture } from "./models-view.ts";
import { anthropicListed, anthropicModel, anthropicModelPage, tagAnthropicAnswer, wantsAnthropicShape } from "./models-anthropic.ts";

/** What a catalog path names: a model id, and whether its endpoints were asked for. */
interface Named { id: string; endpoints: boolean }

/** The id's slash as the SDKs send it: one segment, which the router decodes all but its encoded separators. */
const ENCODED_SLASH = /%2f/gi;

function named(ctx: GatewayContext): Named {
  // The openai and Anthropic SDKs' models.retrieve: `/v1/models/anthropic%2Fclaude-sonnet-4.5`.
  if (ctx.params.id) return { id: ctx.params.id.replace(ENCODED_SLASH, "/"), endpoints: false };
  const { creator, model } = ctx.params as { creator: string; model: string };
  // The encoded id followed by /endpoints comes as {creator}/{model} (a creator never contains a slash).
  if (/%2f/i.test(creator)) {
    const id = creator.replace(ENCODED_SLASH, "/");
    return model === "endpoints" ? { id, endpoints: true } : { id: `${id}/${model}`, endpoints: false };
  }
  // /api/v1/models/{creator}/{model}[/endpoints]: a slug never contains "/", so the segment count decides.
  const segments = ctx.path.split("?")[0]!.replace(/\/+$/, "").split("/").filter(Boolean);
  return { id: `${creator}/${model}`, endpoints: segments.length === 6 };
}

function lookup(ctx: GatewayContext, id: string): ModelRuntime {
  const m = ctx.config.models.get(id);
  if (!m) throw new GatewayError(404, "MODEL_NOT_FOUND", `Model "${id}" does not exist (GET /api/v1/models lists the catalog)`, { details: { model: id } });
  // Every endpoint retired: the model is gone, as a request for it is told.
  const now = Date.now();
  if (m.retiresAt && fullyRetired(m, now)) throw retiredModelError(m, retiredEndpoint(m, now)!, "model", now);
  ctx.model = m;
  return m;
}

/** Endpoints this caller's requests could use: sandbox keys reach the simulator; others, enabled or own-key providers. */
function usableEndpoints(ctx: GatewayContext, m: ModelRuntime): ModelEndpointConfig[] {
  if (ctx.auth?.sandbox) return [{ provider: "sim", model: m.id, context_window: m.config.context_window, max_tokens: m.config.max_tokens }];
  const own = ctx.auth?.project.config.providers ?? {};
  return liveEndpoints(m, Date.now()).filter((ep) => ctx.config.providers.has(ep.provider) || !!own[ep.provider]?.api_key);
}

async function listModels(ctx: GatewayContext): Promise<void> {
  const now = Date.now();
  const all = [...ctx.config.models.values()].filter((m) => !m.retiresAt || !fullyRetired(m, now));
  if (!wantsAnthropicShape(ctx)) {
    ctx.response = { kind: "json", status: 200, body: { object: "list", data: all.map(modelEntry) } };
    return;
  }
  // Language models only: anthropicListed.
  ctx.response = { kind: "json", status: 200, body: anthropicModelPage(ctx, all) };
  tagAnthropicAnswer(ctx);
}

async function getModel(ctx: GatewayContext, id: string): Promise<void> {
  const m = lookup(ctx, id);
  if (!wantsAnthropicShape(ctx)) {
    ctx.response = { kind: "json", status: 200, body: modelDetail(m) };
    return;
  }
  // What the Anthropic-shaped list leaves out is not there to retrieve either: Anthropic's 404 for a model it does not
  // serve, as the Gemini-shaped catalog does for what it leaves out.
  if (!anthropicListed(m)) {
    throw new GatewayError(404, "MODEL_NOT_FOUND", `Model "${id}" is not a language model: the Anthropic-shaped catalog (anthropic-version sent) lists language models only; without anthropic-version GET /api/v1/models/{id} describes it`, { details: { model: id } });
  }
  ctx.response = { kind: "json", status: 200, body: anthropicModel(m) };
  tagAnthropicAnswer(ctx);
}

async function getEndpoints(ctx: GatewayContext, id: string): Promise<void> {
  const m = lookup(ctx, id);
  const stats = statsOf(ctx.gateway);
  const health = healthOf(ctx.gateway);
  // A provider this project reaches with its own key has a circuit of its own (docs/routing.md): show that one.
  const own = ctx.auth?.sandbox ? {} : ctx.auth?.project.config.providers ?? {};
  const endpoints = await Promise.all(usableEndpoints(ctx, m).map(async (ep) => endpointEntry(m, {
    ep,
    provider: ep.provider === "sim" ? { protocol: "sim" } : ctx.config.raw.providers?.[ep.provider],
    stats: await stats.read(m.id, ep.provider),
    status: health.stateOf(m.id, ep.provider, own[ep.provider]?.api_key ? ctx.auth!.projectId : undefined),
  })));
  ctx.response = { kind: "json", status: 200, body: { data: { id: m.id, name: m.config.name ?? m.id, architecture: architecture(m), endpoints } } };
}

/**
 * The three routes share the endpoint kind "models", and the core finds a terminal by kind: one terminal picks the
 * answer from the route parameters and path.
 */
export function modelsTerminal(ctx: GatewayContext): Promise<void> {
  if (!ctx.params.id && (!ctx.params.creator || !ctx.params.model)) return listModels(ctx);
  const { id, endpoints } = named(ctx);
  return endpoints ? getEndpoints(ctx, id) : getModel(ctx, id);
}

export const modelsEndpoints: EndpointSpec[] = [
  {
    kind: "models",
    method: "GET",
    route: "/api/v1/models",
    protocol: "openai",
    terminal: modelsTerminal,
    openapi: {
      operationId: "list_models",
      summary: "List every model in the catalog (filter client-side by type, tags, pricing); a request with anthropic-version gets one page in the Anthropic Models API's shape",
      responseSchema: "ModelList",
      anthropicResponseSchema: "AnthropicModelList",
      headers: ["anthropic-version"],
      query: [
        { name: "limit", schema: { type: "integer", minimum: 1, maximum: 1000, default: 20 }, description: "With anthropic-version: models per page (else ignored: the whole catalog)" },
        { name: "after_id", schema: { type: "string" }, description: "With anthropic-version: the page after this model (a previous page's last_id)" },
        { name: "before_id", schema: { type: "string" }, description: "With anthropic-version: the page before this model (a previous page's first_id); not with after_id" },
      ],
      tag: "Catalog",
    },
  },
  {
    kind: "models",
    method: "GET",
    route: "/api/v1/models/:creator/:model",
    protocol: "openai",
    terminal: modelsTerminal,
    openapi: { operationId: "get_model", summary: "One catalog entry with further metadata (with anthropic-version: the Anthropic Models API's ModelInfo)", responseSchema: "Model", anthropicResponseSchema: "AnthropicModelInfo", headers: ["anthropic-version"], tag: "Catalog" },
  },
  {
    kind: "models",
    method: "GET",
    route: "/api/v1/models/:id",
    protocol: "openai",
    terminal: modelsTerminal,
    openapi: { operationId: "get_model_by_id", summary: "The same entry as GET /api/v1/models/{creator}/{model}, the id as one URL-encoded segment (`anthropic%2Fclaude-sonnet-4.5`), as the openai and Anthropic SDKs' models.retrieve send it", responseSchema: "Model", anthropicResponseSchema: "AnthropicModelInfo", headers: ["anthropic-version"], tag: "Catalog" },
  },
  {
    kind: "models",
    method: "GET",
    route: "/api/v1/models/:creator/:model/endpoints",
    protocol: "openai",
    terminal: modelsTerminal,
    openapi: { operationId: "get_model_endpoints", summary: "Per-provider details of a model: context, limits, pricing, parameters and live latency, throughput and uptime", responseSchema: "ModelEndpoints", tag: "Catalog" },
  },
];
