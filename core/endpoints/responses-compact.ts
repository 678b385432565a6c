// POST /api/v1/responses/compact (the openai SDK's responses.compact): not served. OpenAI's compaction returns an
// opaque `compaction` item only OpenAI can read back, so no translated model could serve it, and the gateway does not
// relay it to native OpenAI models either. Without its route the path would be taken for /responses/{id} and
// answered 405 "use GET or DELETE", sending the caller to look up a response named "compact". The route is one of
// the stored-state routes (responses-state.ts): they share a kind, so their terminal picks this answer by path.
import { GatewayError } from "../errors.ts";

export const COMPACT_ROUTE = "/api/v1/responses/compact";

/** The 404 that names the endpoint as not supported. */
export function compactNotServed(): GatewayError {
  return new GatewayError(404, "NOT_FOUND", "POST /v1/responses/compact (conversation compaction) is not supported by this gateway: send the whole conversation, or continue it with previous_response_id", {
    details: { endpoint: "/v1/responses/compact" },
  });
}

export const compactOpenApi = {
  operationId: "compact_response",
  summary: "Not supported: always a 404 NOT_FOUND naming the endpoint (OpenAI's compaction item is state only OpenAI reads)",
  notServed: true,
  tag: "Inference",
};
