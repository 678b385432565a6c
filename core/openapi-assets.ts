// The signed asset route in /api/openapi.json: GET /api/v1/assets/{name} (core/assets/serve.ts), where a generated
// image or video is fetched. No API key: the link's signature is the credential. Its own file: openapi.ts
// describes the endpoints that run the pipeline, this route runs none.
import { requestIdHeader, retryHeaders } from "./openapi-headers.ts";

type Json = any;

const ENVELOPE = { $ref: "#/components/schemas/ErrorEnvelope" };

function error(description: string): Json {
  return { description, headers: requestIdHeader(), content: { "application/json": { schema: ENVELOPE } } };
}

/** The bytes of an asset, whole (200) or one range of them (206). */
function bytes(description: string, extra: Record<string, Json> = {}): Json {
  const header = (description: string) => ({ description, schema: { type: "string" } });
  return {
    description,
    headers: {
      ...requestIdHeader(),
      "Accept-Ranges": header("bytes"),
      "Content-Length": header("The bytes sent"),
      "Cache-Control": header("private, max-age: the link's remaining life"),
      ...extra,
    },
    content: {
      "image/*": { schema: { type: "string", format: "binary" } },
      "video/*": { schema: { type: "string", format: "binary" } },
      // A media type object has no description in OpenAPI 3.1 (the document would not validate): the schema carries it.
      "application/octet-stream": { schema: { type: "string", format: "binary", description: "A type a browser could run (sent as a download)" } },
    },
  };
}

/** GET (and HEAD) /v1/assets/{name}?expires=…&sig=…: what a signed link in an images or videos answer points to. */
export function assetOperation(): Json {
  const query = (name: string, description: string, type: string) => ({ name, in: "query", required: true, schema: { type }, description });
  return {
    operationId: "get_asset",
    summary: "A generated image or video, by the signed link an images or videos answer gave (HEAD too; single byte ranges for seeking)",
    tags: ["Inference"],
    security: [],
    parameters: [
      { name: "name", in: "path", required: true, schema: { type: "string" }, description: "The asset's name, as the link has it" },
      query("expires", "When the link expires, in Unix seconds (one hour after the answer that signed it)", "integer"),
      query("sig", "The link's signature", "string"),
      { name: "Range", in: "header", required: false, schema: { type: "string" }, description: "One byte range (bytes=start-end, start-, -suffix)" },
    ],
    responses: {
      "200": bytes("The asset"),
      "206": bytes("The range asked for", { "Content-Range": { description: "bytes start-end/size", schema: { type: "string" } } }),
      "404": error("NOT_FOUND: the link is invalid (a bad or missing signature), or the asset is no longer kept"),
      "410": error("INVALID_REQUEST with details.reason link_expired (and expired_at): the link is past expires; repeat the request with its idempotency key for a fresh link (an image asked for without a key is kept only while its link lives)"),
      "416": { description: "The range is outside the asset; Content-Range: bytes */size", headers: requestIdHeader() },
      // core/server.ts refuses every route alike while the gateway shuts down.
      "503": { ...error("INTERNAL: the gateway is shutting down; retry after Retry-After"), headers: { ...requestIdHeader(), ...retryHeaders() } },
    },
  };
}
