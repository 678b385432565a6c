// An OpenAI-protocol stream reports a failure mid-stream as a chunk with `error`: translators turn it into the
// gateway's error, which the client sees as its own protocol's error event.
import { GatewayError } from "../../core/errors.ts";

/** Throws when a parsed chat chunk is an error chunk. */
export function throwIfChatStreamError(chunk: any, provider: string): void {
  if (!chunk?.error) return;
  const msg = typeof chunk.error.message === "string" ? chunk.error.message : "upstream stream error";
  throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} failed mid-stream: ${msg}`, { details: { provider, upstream_error: chunk.error } });
}
