// Chat completions to an OpenAI-protocol upstream: only the model id (and usage reporting on streams) changes.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { Target } from "../../core/contracts/provider.ts";
import type { UpstreamRequest } from "../http.ts";
import { fitReasoningModel, isReasoningTarget } from "./reasoning-params.ts";
import { fitReasoningFields } from "./reasoning-fields.ts";
import { dropChatEffort } from "./refused-reasoning.ts";
import { reasoningFieldOf, refusesUnknownFields, stopLimitOf, toolIdRuleOf } from "./host-conventions.ts";
import { chatToolIdsFor } from "./tool-call-ids.ts";
import { fitStrictHost } from "./strict-host.ts";
import { checkChatStop } from "../translate/stop-limit.ts";
import { clientName } from "../translate/client-names.ts";

const DEFAULT_BASE = "https://api.openai.com/v1";

/** The gateway's own request fields, never forwarded. */
const GATEWAY_ONLY = new Set(["providerOptions"]);

/** The base URL this target's requests go to (a project's own key may bring its own). */
export function baseUrlOf(config: ProviderConfig, target: Target): string {
  return target.credentials?.baseUrl ?? config.base_url ?? DEFAULT_BASE;
}

export function endpointUrl(config: ProviderConfig, target: Target, path: string): string {
  const base = baseUrlOf(config, target).replace(/\/+$/, "");
  if (config.flavor === "azure") {
    const version = encodeURIComponent(config.api_version ?? "2024-10-21");
    return `${base}/openai/deployments/${encodeURIComponent(target.upstreamModel)}${path}?api-version=${version}`;
  }
  return `${base}${path}`;
}

export function authHeaders(config: ProviderConfig, target: Target): Record<string, string> {
  const key = target.credentials?.apiKey ?? config.api_key;
  const h: Record<string, string> = { "content-type": "application/json", accept: "application/json", ...config.headers };
  if (key) {
    if (config.flavor === "azure") h["api-key"] = key;
    else h.authorization = `Bearer ${key}`;
  }
  return h;
}

/** The upstream request, and the known fields that were not forwarded (for x-mg-dropped-params). */
export function buildChatRequest(body: Record<string, any>, target: Target, config: ProviderConfig, providerName: string): UpstreamRequest & { dropped: string[] } {
  const base = baseUrlOf(config, target);
  // The host's own limit, if it has one known; named as the client sent it (a Messages client's stop_sequences).
  checkChatStop(body.stop, stopLimitOf(config, base), clientName(body, "stop"), providerName);
  const out: Record<string, unknown> = {};
  for (const k in body) if (!GATEWAY_ONLY.has(k)) out[k] = body[k];
  out.model = target.upstreamModel;
  // Provider-namespaced knobs that map onto this protocol's own fields.
  const knobs = body.providerOptions?.[providerName];
  if (knobs?.reasoningEffort && out.reasoning_effort === undefined) out.reasoning_effort = knobs.reasoningEffort;
  // Usage is always requested from the upstream so metering never guesses; the client only sees it if it asked.
  if (body.stream === true) out.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
  // Named as the client sent them (a Gemini client's generationConfig.topP), as on every other upstream.
  const dropped = isReasoningTarget(target) ? fitReasoningModel(out).map((k) => clientName(body, k)) : [];
  // A model that cannot reason (GPT-4.1: named as the client sent it, a Responses client's reasoning.effort), or
  // reasons on its own but refuses the knob (grok-4).
  const effortGone = dropChatEffort(out, target);
  if (effortGone) dropped.push(effortGone === "unreasoning" ? clientName(body, "reasoning_effort") : "reasoning_effort");
  // A host that refuses any field it does not know (Mistral): one OpenAI-only field (Codex's prompt-cache knobs, a
  // translation's max_completion_tokens or verbosity, the gateway's own stream_options) would fail the whole request.
  // Named as the client sent them: a translation's body says how (a Responses client's verbosity is text.verbosity).
  if (refusesUnknownFields(config, base)) dropped.push(...fitStrictHost(out).map((k) => clientName(body, k)));
  const fitted = fitReasoningFields(out.messages, reasoningFieldOf(config, base));
  if (fitted.messages !== out.messages) out.messages = fitted.messages;
  dropped.push(...fitted.dropped);
  // Another provider's tool-call ids (Anthropic's toolu_…, a Kimi functions.<tool>:<n>) this host refuses with a 400.
  const ids = chatToolIdsFor(out.messages, toolIdRuleOf(config, base));
  if (ids !== out.messages) out.messages = ids;
  return { url: endpointUrl(config, target, "/chat/completions"), headers: authHeaders(config, target), body: JSON.stringify(out), dropped };
}
