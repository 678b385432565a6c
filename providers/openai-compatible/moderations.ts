// OpenAI's moderation API, POST {base_url}/moderations: what guardrails call to moderate a request or an answer.
// `{ model, input }` goes up; the answer (`{ id, model, results: [{ flagged, categories, category_scores }] }`) comes
// back as the provider sent it. Failures map onto the gateway's codes as on every other path.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { UpstreamClient } from "../http.ts";
import { sendJson } from "../upstream-json.ts";
import { authHeaders, endpointUrl } from "./request.ts";

export async function openaiModerations(client: UpstreamClient, config: ProviderConfig, name: string, body: { input: unknown }, target: Target, call: CallOptions): Promise<ProviderResult> {
  const req = { url: endpointUrl(config, target, "/moderations"), headers: authHeaders(config, target), body: JSON.stringify({ model: target.upstreamModel, input: body.input }) };
  const { json } = await sendJson(client, name, req, call.signal, target.timeoutMs);
  return { kind: "json", body: json };
}
