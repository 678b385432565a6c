// The error envelope of the API a request path belongs to, for answers given before any endpoint is known (a path or
// method no route takes, a request Node's parser refused): Anthropic's on the Messages paths, Google's on the Gemini
// paths, the spec's (OpenAI-style) elsewhere, so each client's SDK reads its own markers.
import { toGeminiJSON, type GatewayError } from "../errors.ts";
import { isGeminiPath } from "../endpoints/gemini/route.ts";
import { isMessagesPath } from "./messages-path.ts";

export interface PathEnvelope {
  body: unknown;
  /** A Messages path: the request id also goes as Anthropic's `request-id`, as on every Messages answer. */
  anthropic: boolean;
}

/** `path` undefined (not known): the spec's envelope. */
export function envelopeForPath(path: string | undefined, err: GatewayError): PathEnvelope {
  if (path !== undefined && isMessagesPath(path)) return { body: err.toAnthropicJSON(), anthropic: true };
  return { body: path !== undefined && isGeminiPath(path) ? toGeminiJSON(err) : err.toJSON(), anthropic: false };
}
