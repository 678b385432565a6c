// POST {base_url}/responses on an upstream that serves OpenAI's Responses API itself (catalog `native_responses`):
// the client's body as is — built-in tools, include, unknown fields and all — with only the model id replaced, the
// gateway's own providerOptions removed, the reasoning knobs a model that cannot reason refuses left out and named
// (refused-reasoning.ts), and call_ids OpenAI refuses (over 64 characters) shortened (tool-call-ids.ts). Errors map exactly as chat's (providers/http.ts). Azure's deployment-scoped
// URLs have no /responses (it lives at /openai/responses or /openai/v1/responses there), so the driver does not
// offer this op for the azure flavor: Azure targets stay on translation. DELETE /responses/{id} forgets the upstream's
// copy of a response it served natively (the gateway's DELETE of that id forwards it).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { DROPPED_PARAMS_HEADER, type CallOptions, type ProviderResult, type Target } from "../../core/contracts/provider.ts";
import { failFromResponse, type UpstreamClient, type UpstreamRequest } from "../http.ts";
import { authHeaders, baseUrlOf, endpointUrl } from "./request.ts";
import { toolIdRuleOf } from "./host-conventions.ts";
import { responsesCallIdsFor } from "./tool-call-ids.ts";
import { relayResponsesBody } from "./responses-stream.ts";
import { fromResponsesUsage } from "./responses-usage.ts";
import { bodyJson } from "../upstream-json.ts";
import { checkResponsesAnswer } from "../answer-shape.ts";
import { dropResponsesReasoning } from "./refused-reasoning.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

/** The upstream request, and the reasoning knobs left out because the model refuses them (for x-mg-dropped-params). */
export function buildResponsesRequest(body: Record<string, any>, target: Target, config: ProviderConfig): UpstreamRequest & { dropped: string[] } {
  const out: Record<string, unknown> = {};
  for (const k in body) if (k !== "providerOptions") out[k] = body[k];
  out.model = target.upstreamModel;
  // OpenAI refuses a call_id over 64 characters (another provider's, replayed): shortened in call and output alike.
  if (Array.isArray(out.input)) out.input = responsesCallIdsFor(out.input, toolIdRuleOf(config, baseUrlOf(config, target)));
  const dropped = dropResponsesReasoning(out, target);
  return { url: endpointUrl(config, target, "/responses"), headers: authHeaders(config, target), body: JSON.stringify(out), dropped };
}

export async function openaiResponses(
  client: UpstreamClient, config: ProviderConfig, name: string, body: any, target: Target, call: CallOptions,
): Promise<ProviderResult> {
  const req = buildResponsesRequest(body, target, config);
  const res = await client.send(req, call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(name, res);
  const dropped = req.dropped.length ? { [DROPPED_PARAMS_HEADER]: req.dropped.join(",") } : undefined;
  const headers = withUpstreamRequestId(dropped, upstreamRequestId(res.headers));
  if (body.stream === true) return { kind: "stream", headers, events: relayResponsesBody(res.body, call, name, call.signal, res.limits?.answer) };
  const json = checkResponsesAnswer(name, await bodyJson(name, res, call.signal));
  if (json.usage) call.reportUsage(fromResponsesUsage(json.usage, json.output));
  return { kind: "json", headers, body: json };
}

/** DELETE {base_url}/responses/{id}: OpenAI's copy of a response it served natively (true: deleted, false: not there). */
export async function deleteOpenAIResponse(client: UpstreamClient, config: ProviderConfig, name: string, id: string, target: Target, signal: AbortSignal): Promise<boolean> {
  const req: UpstreamRequest = { method: "DELETE", url: endpointUrl(config, target, `/responses/${encodeURIComponent(id)}`), headers: authHeaders(config, target) };
  const res = await client.send(req, signal, target.timeoutMs);
  if (res.status === 404) {
    await res.body.dump();
    return false;
  }
  if (res.status < 200 || res.status >= 300) throw await failFromResponse(name, res);
  await res.body.dump();
  return true;
}
