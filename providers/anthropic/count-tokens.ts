// Anthropic's own POST /v1/messages/count_tokens: the client's body with the upstream model id, the client's
// anthropic-version / anthropic-beta headers forwarded as for /v1/messages. The body is the shared count_tokens
// body (providers/codecs/anthropic-messages). Anthropic's request-id is passed on as x-mg-upstream-request-id.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { failFromResponse, readUpstreamJson, type UpstreamClient } from "../http.ts";
import { anthropicHeaders, messagesUrl } from "./request.ts";
import { countResult } from "../count-result.ts";
import { countTokensBody } from "../codecs/anthropic-messages/count-tokens.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

export async function anthropicCountTokens(client: UpstreamClient, config: ProviderConfig, name: string, body: Record<string, any>, target: Target, call: CallOptions): Promise<ProviderResult> {
  const req = { url: `${messagesUrl(config, target)}/count_tokens`, headers: anthropicHeaders(config, target, call.clientHeaders, true), body: JSON.stringify(countTokensBody(body, target)) };
  const res = await client.send(req, call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(name, res);
  const json = await readUpstreamJson(name, res, call.signal);
  const result = countResult(name, json?.input_tokens, "upstream", json && typeof json === "object" ? json : {});
  // Anthropic's request-id goes on, as a generation's does (messagesAnswer), for a support ticket about the count.
  result.headers = withUpstreamRequestId(result.headers, upstreamRequestId(res.headers));
  return result;
}
