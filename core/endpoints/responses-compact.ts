// POST /api/v1/responses/compact (the openai SDK's responses.compact): not served. OpenAI's compaction returns an
// opaque `compaction` item only OpenAI can read back, so no translated model could serve it, and the gateway does not
// relay it to native OpenAI models either. Without this route the path would be taken for /responses/{id} and
// answered 405 "use GET or DELETE", sending the caller to look up a response named "compact".
import { GatewayError } from "../errors.ts";
import type { EndpointSpec } from "./spec.ts";

export const COMPACT_ROUTE = "/api/v1/responses/compact";

export const responsesCompactEndpoint: EndpointSpec = {
  kind: "responses_state",
  method: "POST",
  route: COMPACT_ROUTE,
  protocol: "responses",
  terminal: async () => {
    throw new GatewayError(404, "NOT_FOUND", "POST /v1/responses/compact (conversation compaction) is not supported by this gateway: send the whole conversation, or continue it with previous_response_id", {
      details: { endpoint: "/v1/responses/compact" },
    });
  },
  openapi: {
    operationId: "compact_response",
    summary: "Not supported: always a 404 NOT_FOUND naming the endpoint (OpenAI's compaction item is state only OpenAI reads)",
    notServed: true,
    tag: "Inference",
  },
};
