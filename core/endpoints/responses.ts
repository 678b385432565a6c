// POST /api/v1/responses: the OpenAI Responses API, stateless for now. Every language model is served through the
// stream-transcoder plugin (responses -> chat, -> messages, -> Gemini). Stored state (previous_response_id,
// retrieve) and built-in tools are not available yet: both are a 400 naming the field rather than a silent ignore.
import { validateResponses } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";

export function checkResponsesRequest(body: any): void {
  if (typeof body?.previous_response_id === "string") {
    throw new GatewayError(400, "INVALID_REQUEST", "previous_response_id is not supported yet: the gateway does not store responses; send the whole conversation in `input`", {
      details: { field: "previous_response_id" },
    });
  }
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  tools.forEach((t, i) => {
    if (t?.type === "function" && typeof t.name === "string" && t.name) return;
    const field = `tools[${i}]${t?.type === "function" ? ".name" : ".type"}`;
    const why = t?.type === "function" ? "a function tool needs a name" : `built-in tool "${String(t?.type)}" is not supported; only function tools are`;
    throw new GatewayError(400, "INVALID_REQUEST", `${field}: ${why}`, { details: { field } });
  });
}

export const responsesEndpoint: EndpointSpec = {
  kind: "responses",
  method: "POST",
  route: "/api/v1/responses",
  protocol: "responses",
  validate: validateResponses,
  terminal: (ctx: GatewayContext) => {
    checkResponsesRequest(ctx.body);
    return dispatch(ctx, "responses");
  },
  openapi: {
    summary: "Create a model response (OpenAI Responses-compatible, stateless), streaming as semantic events or not",
    requestSchema: "ResponsesRequest",
    tag: "Inference",
  },
};
