// What the gateway knows of OpenAI-compatible hosts that differ from one another, recognised from the base URL (or a
// project's own, BYOK): where a previous answer's reasoning goes back (reasoning-fields.ts), whether the host refuses
// fields it does not know (strict-host.ts), how many stop sequences it takes, and which tool-call ids (tool-call-ids.ts). Each is the provider's own setting
// when it has one (a vLLM on loopback, a proxy in front of a known host), else the recognised host's, else nothing
// is changed: an unknown host gets the request as the client sent it, and its own refusal reaches the client.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";

export type ReasoningField = NonNullable<ProviderConfig["reasoning_field"]>;
type ToolIdRule = NonNullable<ProviderConfig["tool_call_ids"]>;

interface HostConvention {
  reasoningField?: ReasoningField;
  /** The host answers 422 to any field outside its own API (Mistral: extra_forbidden). */
  refusesUnknownFields?: true;
  /** The most stop sequences a chat request may carry (more is the host's 400). */
  maxStop?: number;
  /** gen_ai.provider.name (OpenTelemetry GenAI semantic conventions' well-known value) in traces. */
  genAi?: string;
  /** The host's tool calls carry `arguments` as the protocol's JSON string, never an object (tool-arguments.ts). */
  stringArguments?: true;
  /** The tool-call ids the host refuses with a 400 (tool-call-ids.ts). */
  toolIds?: ToolIdRule;
}

/**
 * Hosts whose conventions are known, by hostname (subdomains included). The stop limit is the one each documents:
 * OpenAI's chat completions and Azure OpenAI ("up to 4 sequences"), Groq (its API reference and SDK: "up to 4
 * sequences"); DeepSeek takes 16, vLLM and SGLang have none.
 */
const KNOWN_HOSTS: Record<string, HostConvention> = {
  "api.openai.com": { maxStop: 4, stringArguments: true, toolIds: "openai" },
  "openai.azure.com": { maxStop: 4, genAi: "azure.ai.openai", stringArguments: true, toolIds: "openai" },
  "api.groq.com": { reasoningField: "reasoning", maxStop: 4, genAi: "groq", stringArguments: true },
  "api.deepseek.com": { reasoningField: "reasoning_content", genAi: "deepseek", stringArguments: true },
  "openrouter.ai": { reasoningField: "reasoning_details", stringArguments: true },
  // api.mistral.ai and Codestral's own endpoint (codestral.mistral.ai, its own key): the same API.
  "mistral.ai": { reasoningField: "none", refusesUnknownFields: true, genAi: "mistral_ai", stringArguments: true, toolIds: "mistral" },
  "api.x.ai": { genAi: "x_ai", stringArguments: true },
  "api.perplexity.ai": { genAi: "perplexity", stringArguments: true },
};

const NONE: HostConvention = {};

/** The known conventions of the host `baseUrl` points at (none for an unknown host or a malformed URL). */
export function hostConvention(baseUrl: string): HostConvention {
  // Asked several times per request (buildChatRequest): parse each base_url once. Base URLs come from the config (a
  // project's own too), so few; the cap only guards against a config with very many.
  let c = byBaseUrl.get(baseUrl);
  if (!c) {
    c = conventionOf(baseUrl);
    if (byBaseUrl.size >= 256) byBaseUrl.clear();
    byBaseUrl.set(baseUrl, c);
  }
  return c;
}

const byBaseUrl = new Map<string, HostConvention>();

function conventionOf(baseUrl: string): HostConvention {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return NONE;
  }
  for (const [known, c] of Object.entries(KNOWN_HOSTS)) if (host === known || host.endsWith(`.${known}`)) return c;
  return NONE;
}

/** Where the host takes reasoning back: the provider's setting, else its host's, else passthrough. */
export function reasoningFieldOf(config: ProviderConfig, baseUrl: string): ReasoningField {
  return config.reasoning_field ?? hostConvention(baseUrl).reasoningField ?? "passthrough";
}

/** Whether the host gets only the fields it knows: the provider's unknown_fields, else its host's. */
export function refusesUnknownFields(config: ProviderConfig, baseUrl: string): boolean {
  if (config.unknown_fields) return config.unknown_fields === "refused";
  return hostConvention(baseUrl).refusesUnknownFields === true;
}

/** The host's stop-sequence limit: the provider's max_stop_sequences, else its host's (Azure OpenAI by its flavor too). */
export function stopLimitOf(config: ProviderConfig, baseUrl: string): number | undefined {
  if (config.max_stop_sequences !== undefined) return config.max_stop_sequences;
  return hostConvention(baseUrl).maxStop ?? (config.flavor === "azure" ? 4 : undefined);
}

/** The tool-call ids the host takes: the provider's tool_call_ids, else its host's (Azure OpenAI by its flavor too). */
export function toolIdRuleOf(config: ProviderConfig, baseUrl: string): ToolIdRule {
  return config.tool_call_ids ?? hostConvention(baseUrl).toolIds ?? (config.flavor === "azure" ? "openai" : "passthrough");
}

/**
 * Whether the host may send a tool call's arguments as an object: any host but the known ones (a self-hosted server,
 * a proxy). Only then is each streamed chunk looked at for one (a scan per event the known hosts are spared).
 */
export function mayObjectArguments(config: ProviderConfig, baseUrl: string): boolean {
  return config.flavor !== "azure" && hostConvention(baseUrl).stringArguments !== true;
}

/** gen_ai.provider.name of the host (traces): Azure OpenAI by its flavor too; undefined for plain OpenAI and unknown hosts (the protocol's "openai"). */
export function genAiProviderOf(config: ProviderConfig, baseUrl: string): string | undefined {
  return config.flavor === "azure" ? "azure.ai.openai" : hostConvention(baseUrl).genAi;
}
