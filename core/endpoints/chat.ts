import { validateChatCompletions } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import type { EndpointSpec } from "./spec.ts";
import { foldReasoning } from "./chat-reasoning.ts";
import { dropNullFields } from "./null-fields.ts";
import { wrapBareJsonSchema } from "./response-format.ts";

export const chatEndpoint: EndpointSpec = {
  kind: "chat",
  method: "POST",
  route: "/api/v1/chat/completions",
  protocol: "openai",
  normalize: wrapBareJsonSchema,
  validate: validateChatCompletions,
  prepare: (ctx) => {
    dropNullFields(ctx.body);
    foldReasoning(ctx.body);
  },
  terminal: (ctx) => dispatch(ctx, "chat"),
  openapi: {
    summary: "Create a chat completion (OpenAI-compatible), streaming or not",
    requestSchema: "ChatCompletionRequest",
    responseSchema: "ChatCompletion",
    streamSchema: "ChatCompletionChunk",
    tag: "Inference",
  },
};
