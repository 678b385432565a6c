// The contract between the core and provider adapters. Adapters never see h3 or the client connection.
import type { SseEvent } from "../sse/parse.ts";
import type { ProviderConfig, Pricing } from "../generated/types/gateway.ts";

/** Token usage in canonical form; every field a count of tokens (or units) that is billed separately. */
export interface Usage {
  inputTokens: number;          // uncached input tokens
  outputTokens: number;
  cacheReadTokens?: number;
  /** Of inputTokens, those of audio (Gemini's promptTokensDetails): billed at pricing.input_audio where it is set. */
  audioInputTokens?: number;
  /** Of cacheReadTokens, those of audio (Gemini's cacheTokensDetails): billed at pricing.input_cache_read_audio. */
  cacheReadAudioTokens?: number;
  cacheWriteTokens?: number;
  /** Of cacheWriteTokens, those written with the 1-hour TTL (Anthropic prices them above 5-minute writes). */
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;     // subset of outputTokens
  images?: number;
  videoSeconds?: number;
  searchUnits?: number;
  /** Web searches a language model ran as a paid server tool (Anthropic web_search, OpenAI Responses web_search). */
  webSearches?: number;
}

/** One place a public model can run: the router's output, the dispatcher's input. */
export interface Target {
  modelId: string;              // public id, e.g. openai/gpt-4o-mini
  provider: string;             // provider name in gateway.yaml
  upstreamModel: string;        // the upstream's own model id
  pricing: Pricing;
  contextWindow?: number;
  maxTokens?: number;
  /** Bring-your-own-key credentials that replace the provider's own for this attempt. */
  credentials?: { apiKey?: string; baseUrl?: string };
  timeoutMs?: number;
  sandbox?: boolean;
  /**
   * An OpenAI reasoning model: max_completion_tokens, and no sampling knobs (catalog `reasoning_model`). Absent:
   * recognised from upstreamModel (o-series, GPT-5 but -chat); false or true overrides that.
   */
  reasoningModel?: boolean;
  /** The upstream serves the Responses API itself (catalog `native_responses`): /v1/responses passes through. */
  nativeResponses?: boolean;
  /**
   * true: the model can think (catalog tag `reasoning`): a client protocol whose thinking is on by default asks for it.
   * false: its entry lists tags without `reasoning`, so it cannot (an OpenAI-protocol upstream refuses an effort).
   * Absent: its entry lists no tags (nothing known; a chat client's effort goes as sent).
   */
  reasoning?: boolean;
  /** false: the model reasons on its own and refuses a reasoning effort (catalog `reasoning_effort: false`): none is sent. */
  acceptsReasoningEffort?: boolean;
}

/** Response header naming the known request fields an endpoint did not receive (a driver sets it on its result). */
export const DROPPED_PARAMS_HEADER = "x-mg-dropped-params";

/** Response header saying where a count_tokens answer came from: upstream, simulator, tokenizer:<enc> or estimate:<enc>. */
export const TOKEN_COUNT_HEADER = "x-mg-token-count";

/** What an upstream speaks: OpenAI chat completions, Anthropic messages, Gemini generateContent, Bedrock Converse, or OpenAI's Responses API. */
export type UpstreamProtocol = "chat" | "messages" | "gemini" | "converse" | "responses";

/** What the core hands an adapter for one upstream call. */
export interface CallOptions {
  signal: AbortSignal;
  requestId: string;
  /** Client request headers (lower-case names), for the few that are forwarded (anthropic-version, -beta). */
  clientHeaders: Record<string, string | string[] | undefined>;
  /**
   * The gateway's estimate of the request's input tokens (what rate-limit charges): for a translated stream whose
   * client protocol states the input before the upstream has reported it (Messages' message_start).
   */
  inputEstimate?: number;
  /**
   * Called whenever usage becomes known (at once for JSON, at the usage event for streams). `final`: a stream's
   * usage is the upstream's last word on the whole answer (Anthropic's message_delta, OpenAI's include_usage chunk or
   * Responses' terminal event, Gemini's chunk with finishReason, Converse's metadata), not a running count, so a
   * stream the gateway's own guardrail ends after it is billed it as reported (core/metering/final-usage.ts).
   */
  reportUsage(usage: Usage, how?: { final?: boolean }): void;
  /** Called when a stream's first content arrives from the upstream (time to first token); never for JSON answers. */
  reportFirstToken(): void;
  /** Called when a stream's first upstream event arrives, held or not (the attempt's latency ends there). */
  reportFirstEvent?(): void;
}

export type ProviderResult =
  | { kind: "json"; status?: number; headers?: Record<string, string>; body: unknown }
  | { kind: "stream"; status?: number; headers?: Record<string, string>; events: AsyncIterable<SseEvent> }
  | { kind: "bytes"; status?: number; headers: Record<string, string>; body: Uint8Array };

/** An operation an adapter may implement; the body is the validated client request. */
export type Operation = (body: any, target: Target, call: CallOptions) => Promise<ProviderResult>;

export interface ProviderDriver {
  readonly name: string;
  readonly protocol: string;
  /** gen_ai.provider.name of the host it calls (groq, mistral_ai, azure.ai.openai, ...) when its protocol does not say it (traces). */
  readonly genAiProvider?: string;
  /** Chat completions (OpenAI wire shape in and out). */
  chat?: Operation;
  /** Messages protocol, native (Anthropic wire shape in and out). */
  messages?: Operation;
  /** OpenAI Responses API, native (the client's body in, the upstream's response or named events out); used only for targets with nativeResponses. */
  responses?: Operation;
  /**
   * DELETE {base_url}/responses/{id}: forget a response the upstream stored when it served it natively. Resolves true
   * when deleted, false when the upstream holds no such response; throws the upstream's failure otherwise.
   */
  deleteResponse?(id: string, target: Target, signal: AbortSignal): Promise<boolean>;
  /** Gemini generateContent / streamGenerateContent: a Gemini body in, Gemini JSON or SSE events out (reached through a translator). */
  generateContent?: Operation;
  streamGenerateContent?: Operation;
  /** Bedrock Converse / ConverseStream: a Converse body in, Converse JSON or its stream events (event = type) out. */
  converse?: Operation;
  converseStream?: Operation;
  /** POST /v1/messages/count_tokens: a Messages request (no max_tokens) in, `{ input_tokens }` out; never billed. */
  countTokens?: Operation;
  /**
   * Gemini countTokens with a Gemini client's own request (its generateContent body, as the native pair passes it
   * through) in, `{ input_tokens }` out; never billed. A translated count would refuse what generateContent takes.
   */
  countGeminiTokens?: Operation;
  /**
   * A chat completions body (what a translated Responses create sends a chat upstream) in, `{ input_tokens }` out;
   * never billed. Counted as sent: read as Messages it would be refused what chat serves (web_search_options).
   */
  countChatTokens?: Operation;
  /**
   * POST {base_url}/responses/input_tokens (OpenAI's own count of a Responses request: hosted tools, file ids,
   * conversations and previous_response_id counted where they live) with a Responses client's input fields in,
   * `{ input_tokens }` out; never billed. Only for targets whose /responses passes through (nativeResponses).
   */
  countResponsesTokens?: Operation;
  embeddings?: Operation;
  rerank?: Operation;
  images?: Operation;
  videos?: Operation;
  /** OpenAI's moderation API (POST /moderations): `{ input }` in, its `{ results: [{ flagged, categories }] }` out (guardrails). */
  moderations?: Operation;
  /**
   * A driver that serves several upstream protocols (Vertex: Claude models speak messages, Gemini models gemini)
   * names the one for this target; without it the protocol follows from the ops the driver has.
   */
  upstreamFor?(target: Target): UpstreamProtocol | undefined;
  /**
   * Whether the upstream request this driver builds asks for the model's long context window (Anthropic's
   * context-1m-* beta, wherever the driver sends it: its anthropic-beta header, the provider's configured headers
   * included, or Bedrock's `anthropic_beta` body field). `sent`: the body the driver is handed (undefined for a
   * translated one, which carries none of the client's fields) and the client headers it gets. The usage ceiling and
   * a budget's hold take the long window only where this says so (core/metering/context-window.ts). Absent: never.
   */
  opensLongContext?(target: Target, sent: { body?: Record<string, unknown>; clientHeaders: CallOptions["clientHeaders"] }): boolean;
  close?(): Promise<void>;
}

