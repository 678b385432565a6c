// Span attributes per the GenAI and HTTP semantic conventions, read from the request, an answer or the provider's
// config: pure functions, loaded only with tracing (tracing.ts).
import type { Attributes } from "@opentelemetry/api";
import type { Usage } from "../contracts/provider.ts";
import { statedOutputLimit } from "../metering/output-limit.ts";

/** GenAI operation names (gen_ai.operation.name) for the gateway's endpoints. */
export const GEN_AI_OPERATION: Partial<Record<string, string>> = {
  chat: "chat", messages: "chat", responses: "chat", gemini: "chat", count_tokens: "count_tokens", embeddings: "embeddings", rerank: "rerank",
  images: "generate_content", videos: "generate_content",
};

/**
 * gen_ai.provider.name's well-known values by wire protocol: the fallback when the driver names no host of its own
 * (an OpenAI-protocol driver names Groq, Mistral, DeepSeek, xAI, Azure OpenAI by their host: ProviderDriver.genAiProvider).
 */
const BY_PROTOCOL: Record<string, string> = {
  openai: "openai", anthropic: "anthropic", gemini: "gcp.gemini", cohere: "cohere", bedrock: "aws.bedrock", vertex: "gcp.vertex_ai",
};

export function genAiProviderName(driverValue: string | undefined, protocol: string): string {
  return driverValue ?? BY_PROTOCOL[protocol] ?? protocol;
}

export function requestParams(body: any): Attributes {
  if (!body || typeof body !== "object") return {};
  const a: Attributes = {};
  // The limit the upstream is asked for, whichever alias carries it (core/metering/output-limit.ts).
  const max = statedOutputLimit(body);
  if (max !== undefined) a["gen_ai.request.max_tokens"] = max;
  if (typeof body.temperature === "number") a["gen_ai.request.temperature"] = body.temperature;
  if (typeof body.top_p === "number") a["gen_ai.request.top_p"] = body.top_p;
  if (body.stream === true) a["gateway.stream"] = true;
  return a;
}

/** gen_ai.usage.*: input counts cached tokens too (the conventions' input_tokens is all the prompt). */
export function usageAttributes(u: Usage | undefined, estimated = false): Attributes {
  if (!u) return {};
  const a: Attributes = {
    "gen_ai.usage.input_tokens": (u.inputTokens || 0) + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0),
    "gen_ai.usage.output_tokens": u.outputTokens || 0,
  };
  if (u.cacheReadTokens) a["gen_ai.usage.cache_read.input_tokens"] = u.cacheReadTokens;
  if (u.cacheWriteTokens) a["gen_ai.usage.cache_creation.input_tokens"] = u.cacheWriteTokens;
  // The meter's estimate (a stream cut short, an upstream that reported none), as the ledger bills it.
  if (estimated) a["gateway.usage.estimated"] = true;
  return a;
}

/** `a - b` per token kind, never below zero: what is left of a request's billed usage after the attempts that reported theirs. */
export function usageLeft(a: Usage, b: Usage[]): Usage {
  const sub = (k: "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens") => Math.max(0, (a[k] ?? 0) - b.reduce((n, u) => n + (u[k] ?? 0), 0));
  const out: Usage = { inputTokens: sub("inputTokens"), outputTokens: sub("outputTokens") };
  if (a.cacheReadTokens) out.cacheReadTokens = sub("cacheReadTokens");
  if (a.cacheWriteTokens) out.cacheWriteTokens = sub("cacheWriteTokens");
  return out;
}

/** Responses API status as a finish reason: completed is a natural stop; incomplete says why (max_output_tokens, content_filter). */
function responsesReason(status: unknown, incomplete: any): string | undefined {
  if (status === "completed") return "stop";
  if (status === "incomplete") return typeof incomplete?.reason === "string" ? incomplete.reason : "incomplete";
  if (status === "failed" || status === "cancelled") return status;
  return undefined;
}

/** gen_ai.response.finish_reasons of a JSON answer: chat choices, Messages' stop_reason, Gemini candidates, a Responses status. */
export function finishReasonsOf(body: any): string[] {
  if (!body || typeof body !== "object") return [];
  if (typeof body.stop_reason === "string") return [body.stop_reason];
  const out: string[] = [];
  const add = (r: unknown) => {
    if (typeof r === "string" && !out.includes(r)) out.push(r);
  };
  for (const c of Array.isArray(body.choices) ? body.choices : []) add(c?.finish_reason);
  for (const c of Array.isArray(body.candidates) ? body.candidates : []) add(c?.finishReason);
  if (body.object === "response") add(responsesReason(body.status, body.incomplete_details));
  return out;
}

const REASON = /"(?:finish_reason|stop_reason|finishReason)":"([^"]+)"/g;
const RESPONSE_END = /^\{\s*"type"\s*:\s*"response\.(?:completed|incomplete|failed)"/;

/**
 * Finish reasons in one stream event's data, added to `into`: chat's finish_reason, Messages' stop_reason, Gemini's
 * finishReason, the terminal Responses event's status. The caller tests the cheap substring first.
 */
export function scanFinishReasons(data: string, event: string | undefined, into: string[]): void {
  for (const m of data.matchAll(REASON)) if (!into.includes(m[1]!)) into.push(m[1]!);
  if (event === "response.completed" || event === "response.incomplete" || event === "response.failed" || RESPONSE_END.test(data)) {
    try {
      const r = JSON.parse(data)?.response;
      const reason = responsesReason(r?.status, r?.incomplete_details);
      if (reason && !into.includes(reason)) into.push(reason);
    } catch {
      // not ours to judge: the relay reports a broken event
    }
  }
}

/** Whether an event's data may carry a finish reason: one substring test per event on the streaming path. */
export function mayEnd(data: string, event: string | undefined): boolean {
  return data.includes('eason":"') || (event !== undefined && event.startsWith("response.") && (event === "response.completed" || event === "response.incomplete" || event === "response.failed")) || data.startsWith('{"type":"response.');
}

const addressCache = new Map<string, Attributes>();

/** server.address and server.port of an upstream base URL (cached: a handful of providers). */
export function serverAttributes(baseUrl: string | undefined): Attributes {
  if (!baseUrl) return {};
  let a = addressCache.get(baseUrl);
  if (!a) {
    try {
      const u = new URL(baseUrl);
      a = { "server.address": u.hostname.replace(/^\[|\]$/g, ""), "server.port": Number(u.port) || (u.protocol === "https:" ? 443 : 80) };
    } catch {
      a = {};
    }
    if (addressCache.size > 1000) addressCache.clear();
    addressCache.set(baseUrl, a);
  }
  return a;
}
