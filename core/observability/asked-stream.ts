// Whether a request asked for a stream, for the access line's `stream`: what the client asked, also where the request
// was refused before answering (invalid, 401, 404, 429) or the client left before a stream was adopted as the answer.
// Read from the request as sent, not only from the body: a Gemini request asks by its URL's method (the body's
// `stream` is set only once it is valid) and a stored Responses answer by `?stream=true`.
import type { GatewayContext } from "../pipeline/context.ts";

export function askedForStream(ctx: Pick<GatewayContext, "response" | "body" | "params" | "endpoint" | "method" | "path">): boolean {
  if (ctx.response?.kind === "stream") return true;
  // Before the body: the Gemini API has no body field for it (a client's stream: true on :generateContent asks nothing).
  if (ctx.endpoint === "gemini") return ctx.params.action === "streamGenerateContent";
  if (ctx.body?.stream === true) return true;
  if (ctx.endpoint === "responses_state" && ctx.method === "GET") return queryOf(ctx.path).get("stream") === "true";
  return false;
}

function queryOf(path: string): URLSearchParams {
  const q = path.indexOf("?");
  return new URLSearchParams(q === -1 ? "" : path.slice(q + 1));
}
