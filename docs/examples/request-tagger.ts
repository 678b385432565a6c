// Example third-party plugin: tags every response with a header and can refuse chosen models.
// Load it from gateway.yaml:
//   plugins:
//     request-tagger: { module: ./docs/examples/request-tagger.ts, options: { header: x-team, value: search, block: ["openai/gpt-4o"] } }
//   pipeline: [auth, request-tagger, router]
// Only the public entry (package.json "exports"), never internal paths: those may move between releases.
import { definePlugin, GatewayError } from "model-gateway/plugin";

interface Options {
  header: string;
  value: string;
  block?: string[];
}

export default definePlugin<Options, { seen: number }>({
  name: "request-tagger",
  dependsOn: ["auth"],
  optionsSchema: {
    type: "object",
    required: ["header", "value"],
    additionalProperties: false,
    properties: {
      header: { type: "string", pattern: "^x-[a-z0-9-]+$" },
      value: { type: "string" },
      block: { type: "array", items: { type: "string" } },
    },
  },
  setup: () => ({ seen: 0 }),
  async handle(ctx, next, { options, state }) {
    state.seen++;
    ctx.responseHeaders[options.header] = options.value;
    const model = ctx.body?.model;
    if (typeof model === "string" && options.block?.includes(model)) {
      // Short-circuit: no next(), the request never reaches the router or a provider.
      throw new GatewayError(403, "MODEL_NOT_ALLOWED", `request-tagger blocks ${model} for project ${ctx.auth?.projectId}`);
    }
    await next();
  },
});
