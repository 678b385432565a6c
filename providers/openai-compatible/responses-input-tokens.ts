// POST {base_url}/responses/input_tokens on an upstream that serves OpenAI's Responses API itself (catalog
// `native_responses`): OpenAI's own count of a Responses request, for the targets whose create passes through, so
// what only it can read (hosted tools, file ids, a conversation, a previous_response_id it holds) is counted, not
// refused or left out. The body is the count's parameters only (openai's InputTokenCountParams: the API refuses the
// create's other fields), made as a create's native body is made (responses.ts: the upstream model id, no
// providerOptions, reasoning knobs the model refuses left out, long call_ids shortened). Errors map as chat's.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { failFromResponse, readUpstreamJson, type UpstreamClient } from "../http.ts";
import { countResult } from "../count-result.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";
import { endpointUrl } from "./request.ts";
import { buildResponsesRequest } from "./responses.ts";

/** The fields POST /responses/input_tokens takes (openai 6.x InputTokenCountParams); providerOptions is the gateway's. */
export const COUNT_FIELDS = [
  "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "text", "reasoning", "truncation",
  "personality", "previous_response_id", "conversation", "providerOptions",
] as const;

/** The upstream count request: the count's fields of `body`, made as a create's native body. */
export function buildResponsesCountRequest(body: Record<string, any>, target: Target, config: ProviderConfig) {
  const fields: Record<string, unknown> = {};
  for (const f of COUNT_FIELDS) if (body[f] !== undefined) fields[f] = body[f];
  const req = buildResponsesRequest(fields, target, config);
  return { ...req, url: endpointUrl(config, target, "/responses/input_tokens") };
}

export async function openaiCountResponsesTokens(
  client: UpstreamClient, config: ProviderConfig, name: string, body: any, target: Target, call: CallOptions,
): Promise<ProviderResult> {
  const req = buildResponsesCountRequest(body, target, config);
  const res = await client.send(req, call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(name, res);
  const json = await readUpstreamJson(name, res, call.signal);
  const result = countResult(name, json?.input_tokens, "upstream");
  result.headers = withUpstreamRequestId(result.headers, upstreamRequestId(res.headers));
  return result;
}
