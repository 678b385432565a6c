// POST /api/v1/messages/count_tokens: the Anthropic endpoint (Claude Code calls it before it compacts a context).
// Every language model answers `{ input_tokens }`: Anthropic-protocol upstreams by passthrough, Gemini by its
// countTokens, OpenAI-protocol models with a local tokenizer, the simulator with its own count (the driver's
// countTokens op; x-mg-token-count says which). A model whose provider cannot count is a 400, never a 0.
// Not billed: no budget reservation and no ledger record (a project whose budget is used up gets the 402 all the
// same), rate-limit charges one request and no tokens.
import { validateCountTokens } from "../generated/validators.js";
import { dispatch } from "../dispatch.ts";
import type { EndpointSpec } from "./spec.ts";

export const countTokensEndpoint: EndpointSpec = {
  kind: "count_tokens",
  method: "POST",
  route: "/api/v1/messages/count_tokens",
  protocol: "anthropic",
  validate: validateCountTokens,
  terminal: (ctx) => dispatch(ctx, "countTokens"),
  openapi: {
    summary: "Count a Messages request's input tokens on a model (Anthropic count_tokens-compatible); not billed",
    requestSchema: "CountTokensRequest",
    responseSchema: "CountTokensResult",
    responseHeaders: ["x-mg-token-count"],
    tag: "Inference",
  },
};
