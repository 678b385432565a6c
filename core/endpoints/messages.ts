// POST /api/v1/messages: the Anthropic-compatible Messages API. Anthropic models are served natively; every other
// language model through the stream-transcoder plugin (messages -> chat -> messages).
import { validateMessages } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import type { EndpointSpec } from "./spec.ts";

export const messagesEndpoint: EndpointSpec = {
  kind: "messages",
  method: "POST",
  route: "/api/v1/messages",
  protocol: "anthropic",
  validate: validateMessages,
  terminal: (ctx) => dispatch(ctx, "messages"),
  openapi: {
    summary: "Create a message (Anthropic Messages-compatible), streaming as named events or not",
    requestSchema: "MessagesRequest",
    responseSchema: "Message",
    streamSchema: "MessageStreamEvent",
    namedEvents: true,
    tag: "Inference",
  },
};
