// POST /api/v1/responses: the OpenAI Responses API. Every language model is served through the stream-transcoder
// plugin (responses -> chat, -> messages, -> Gemini, or passed through to an upstream serving /responses itself).
// Stored state (store, previous_response_id, item_reference) is in responses-state.ts. Built-in tools pass through to
// native upstreams (catalog native_responses) and are a 400 naming tools[i].type when every target is translated.
import { validateResponses } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import { serveWithState } from "./responses-state.ts";
import { serveMcp } from "../responses/mcp-loop.ts";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import type { EndpointSpec } from "./spec.ts";

export function checkResponsesRequest(body: any): void {
  // Built-in tools are checked per attempt (providers/translate/responses-native-only.ts): native upstreams serve them.
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  tools.forEach((t, i) => {
    if (t?.type !== "function" || (typeof t.name === "string" && t.name)) return;
    throw new GatewayError(400, "INVALID_REQUEST", `tools[${i}].name: a function tool needs a name`, { details: { field: `tools[${i}].name` } });
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
    // Stored state (responses-state.ts): previous_response_id and item_reference in, the finished response saved.
    // The mcp tool (core/responses/mcp-loop.ts): run by the gateway unless a native upstream can.
    return serveWithState(ctx, () => serveMcp(ctx, () => dispatch(ctx, "responses")));
  },
  openapi: {
    summary: "Create a model response (OpenAI Responses-compatible; stored unless store: false), streaming as semantic events or not",
    requestSchema: "ResponsesRequest",
    responseSchema: "ResponseObject",
    streamSchema: "ResponseStreamEvent",
    namedEvents: true,
    tag: "Inference",
  },
};
