// chat -> messages refuses a plain http image URL as Anthropic does ("Anthropic fetches only https image URLs").
// The same translation makes the Messages count body the count endpoints (/responses/input_tokens, Gemini's
// :countTokens) hand every other model's countTokens, a Gemini or OpenAI model's too: there the refusal names the
// provider being counted for, not Anthropic, whose rule it is not.
import type { Target } from "../../../core/contracts/provider.ts";
import { GatewayError, invalidRequest } from "../../../core/errors.ts";

/** A Claude model (Anthropic's API, Claude on Bedrock or Vertex): Anthropic's rule is the model's own. */
const forClaude = (driverProtocol: string, target: Target) => driverProtocol === "anthropic" || /claude/i.test(target.upstreamModel);

/** `err`, or for a model that is not Claude the same not_https refusal in words naming its provider. */
export function httpImageRefusalFor(err: unknown, driverProtocol: string, target: Target): unknown {
  if (!(err instanceof GatewayError) || err.details?.reason !== "not_https" || forClaude(driverProtocol, target)) return err;
  const field = String(err.details.field);
  return invalidRequest(`${field}: counting tokens for provider "${target.provider}" takes only https image URLs; send an https URL or a base64 data URL`, field, { reason: "not_https" });
}
