// Embeddings on an OpenAI-protocol upstream. Asks for base64 (a quarter of the bytes of float JSON) when the client
// did — as the official SDKs do by default, so compatible servers support it — and floats otherwise; decodes either.
// Splits batches to the upstream's limits (2048 inputs, 300k tokens per request) and reassembles them in order.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { UpstreamClient } from "../http.ts";
import type { EmbeddingsCall, EmbeddingsOutput } from "../../core/contracts/media.ts";
import { planBatches, runBatches } from "../batch.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";
import { decodeFloat32Base64, sendJson } from "../upstream-json.ts";
import { addCount } from "../usage-count.ts";
import { authHeaders, endpointUrl } from "./request.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

export const OPENAI_EMBED_LIMITS = { maxItems: 2048, maxTokens: 300_000 };

export async function openaiEmbeddings(client: UpstreamClient, config: ProviderConfig, name: string, call: EmbeddingsCall, target: Target, opts: CallOptions): Promise<ProviderResult> {
  let tokens = 0;
  let id: string | undefined; // the first call to answer's, when the input took several
  const batches = planBatches<string | number[]>(call.input, OPENAI_EMBED_LIMITS, (x) => (typeof x === "string" ? estimateTokens(x) : x.length));
  const vectors = await runBatches(batches, async (batch) => {
    const body: Record<string, unknown> = { ...call.extra, model: target.upstreamModel, input: batch, encoding_format: call.base64 ? "base64" : "float" };
    if (call.dimensions !== undefined) body.dimensions = call.dimensions;
    if (call.user !== undefined) body.user = call.user;
    const { json, headers } = await sendJson(client, name, { url: endpointUrl(config, target, "/embeddings"), headers: authHeaders(config, target), body: JSON.stringify(body) }, opts.signal, target.timeoutMs);
    id ??= upstreamRequestId(headers);
    tokens = addCount(tokens, json?.usage?.prompt_tokens);
    const data: any[] = Array.isArray(json?.data) ? [...json.data].sort((a, b) => Number(a?.index) - Number(b?.index)) : [];
    // Anything but the form asked for is passed on as sent: the endpoint refuses what is not a vector.
    return data.map((d) => (call.base64 && typeof d?.embedding === "string" ? (decodeFloat32Base64(d.embedding) ?? d.embedding) : d?.embedding));
  });
  const out: EmbeddingsOutput = { vectors, inputTokens: tokens };
  return { kind: "json", body: out, headers: withUpstreamRequestId(undefined, id) };
}
