// allowlist: a project's allow_models (exact ids and globs) gate the requested model and every fallback model in
// providerOptions.gateway.models -> 403 MODEL_NOT_ALLOWED. Each endpoint also only serves models of its type, so
// an embedding model on chat completions is a clear 400 naming `model`, never an upstream error.
import { definePlugin } from "../../core/pipeline/define.ts";
import { GatewayError } from "../../core/errors.ts";
import type { EndpointKind, GatewayContext } from "../../core/pipeline/context.ts";
import type { ProjectConfig } from "../../core/generated/types/gateway.ts";
import { compileAllowlist, type Matcher } from "../../core/config/glob.ts";
import { requestedModels } from "../../core/pipeline/requested-models.ts";
import { aModelOfType } from "../../core/endpoints/model-type-words.ts";

const TYPE_FOR: Partial<Record<EndpointKind, string>> = {
  chat: "language",
  messages: "language",
  responses: "language",
  gemini: "language",
  count_tokens: "language",
  embeddings: "embedding",
  rerank: "reranking",
  images: "image",
  videos: "video",
};

const matchers = new WeakMap<ProjectConfig, Matcher>();

function matcherFor(project: ProjectConfig): Matcher {
  let m = matchers.get(project);
  if (!m) matchers.set(project, (m = compileAllowlist(project.allow_models)));
  return m;
}

function wrongType(ctx: GatewayContext, id: string, field: string, type: string, expected: string): GatewayError {
  const message = `Model "${id}" is ${aModelOfType(type)}; ${ctx.method} ${ctx.path.split("?")[0]} needs ${aModelOfType(expected)}`;
  const details = { field, model: id, type, expected };
  // The spec names a capability mismatch on images MODEL_NOT_ALLOWED; the other endpoints report a bad request.
  if (ctx.endpoint === "images") return new GatewayError(403, "MODEL_NOT_ALLOWED", message, { details });
  const code = ctx.endpoint === "rerank" || ctx.endpoint === "videos" ? "BAD_REQUEST" : "INVALID_REQUEST";
  return new GatewayError(400, code, message, { details });
}

export default definePlugin({
  name: "allowlist",
  dependsOn: ["auth"],
  handle(ctx, next) {
    if (!ctx.auth || ctx.body === undefined) return next();
    const allowed = matcherFor(ctx.auth.project.config);
    const expected = TYPE_FOR[ctx.endpoint];
    for (const { id, field } of requestedModels(ctx.body)) {
      if (!allowed(id)) {
        throw new GatewayError(403, "MODEL_NOT_ALLOWED", `Project "${ctx.auth.projectId}" is not allowed to use model "${id}"`, {
          details: { field, model: id, project: ctx.auth.projectId },
        });
      }
      const model = ctx.config.models.get(id);
      if (model && expected && model.type !== expected) throw wrongType(ctx, id, field, model.type, expected);
    }
    return next();
  },
});
