// The translation contract (issue 12): one Translator per (client protocol, upstream protocol) pair, applied per
// attempt by the stream-transcoder plugin. Drivers speak only their upstream's own protocol; a translator turns the
// client's request into it and the upstream's answer (JSON, stream events, errors) back. Usage that only the
// translation can read (Gemini's usageMetadata) is reported here through call.reportUsage.
import type { SseEvent } from "../sse/parse.ts";
import type { GatewayError } from "../errors.ts";
import type { CallOptions, ProviderDriver, Target, UpstreamProtocol } from "./provider.ts";
import type { UrlFetchOptions } from "../net/url-fetch.ts";

/** What a client speaks: /v1/chat/completions, /v1/messages, /v1/responses or Gemini's /v1beta/models/{model}:generateContent. */
export type ClientProtocol = "chat" | "messages" | "responses" | "gemini";
export type { UpstreamProtocol } from "./provider.ts";
/** The driver op a translated request is sent to. */
export type UpstreamOp = "chat" | "messages" | "responses" | "generateContent" | "streamGenerateContent" | "converse" | "converseStream";

export interface TranslateOptions {
  /** The request carries cache_control markers (only Anthropic understands them). */
  cacheMarkers: boolean;
  /** The prompt-cache policy wants automatic markers placed on an Anthropic request. */
  cacheAuto: boolean;
  /** The driver's protocol name in gateway.yaml (openai, anthropic, gemini, sim...). */
  driverProtocol: string;
  /** The provider's name, for messages and errors. */
  provider: string;
  /**
   * server.upstream_limits.answer_bytes as configured (unset: the default, providers/upstream-limits.ts): also the
   * most a translated stream builds up of its answer (providers/answer-bound.ts).
   */
  answerBytes?: number;
  /** What the gateway kept for this project under the ids the translator's recallKeys asked for (id -> value). */
  recalled?: ReadonlyMap<string, string>;
  /**
   * Keeps a value for a later request of the same project, under an id every client sends back (a tool-call id):
   * state a client may drop between turns. Set only for a translator with recallKeys, and only with a project.
   */
  keep?(id: string, value: string): void;
}

export interface TranslatedRequest<S> {
  op: UpstreamOp;
  body: unknown;
  /** Known request fields the upstream does not receive (x-mg-dropped-params). */
  dropped: string[];
  /** What the answer's translation needs to know about the request. */
  state: S;
  /**
   * Set when `body` still needs bytes the upstream will not fetch itself (a client's image URL for Gemini): downloads
   * them through the client-URL guard (server.url_fetch) and completes `body` in place. The caller awaits it before
   * sending; a refusal is the client's 400.
   */
  download?(urlFetch: UrlFetchOptions, signal: AbortSignal): Promise<void>;
}

export interface Translator<S = any> {
  /** The identity pair: the client's own protocol headers (anthropic-version, -beta) may be forwarded. */
  readonly native: boolean;
  /** Throws Unsupported when this upstream cannot serve the request at all (the target is passed over). */
  request(body: any, target: Target, opts: TranslateOptions): TranslatedRequest<S>;
  /**
   * Ids of values kept by earlier answers (TranslateOptions.keep) that this request needs back: the gateway reads them
   * (bounded; missing ones are simply absent) before request() and hands them over as TranslateOptions.recalled.
   */
  recallKeys?(body: any, target: Target): string[];
  response(json: unknown, state: S, call: CallOptions): unknown;
  stream(events: AsyncIterable<SseEvent>, state: S, call: CallOptions): AsyncIterable<SseEvent>;
  /** An upstream failure, already a GatewayError in the upstream's terms, as the client should see it. */
  error(err: GatewayError, state: S): GatewayError;
}

/**
 * A target that cannot serve this request (a driver without the operation; a Responses built-in tool on a translated
 * attempt): dispatch passes it over without calling the upstream or judging its health, and answers with `error`
 * only when no target can serve the request.
 */
export class Unsupported extends Error {
  constructor(readonly error: GatewayError) {
    super(error.message);
  }
}

export type Translators = Readonly<Record<ClientProtocol, Readonly<Partial<Record<UpstreamProtocol, Translator>>>>>;

/** The protocol a driver will be spoken to in for a client protocol: its own op if it has one, else what it speaks. */
export function upstreamProtocolOf(driver: ProviderDriver, client: ClientProtocol, target: Target): UpstreamProtocol | undefined {
  // A driver in front of several model families (Vertex: Claude and Gemini) speaks the one its target's model uses.
  const only = driver.upstreamFor?.(target);
  if (only) return only;
  // /responses passes through where the catalog says the upstream serves it; otherwise it is translated.
  if (client === "responses") {
    if (driver.responses && target.nativeResponses) return "responses";
    return driver.chat ? "chat" : driver.messages ? "messages" : driver.generateContent ? "gemini" : undefined;
  }
  // Gemini clients pass through to a Gemini upstream (AI Studio, Vertex) and are translated for every other one.
  if (client === "gemini") {
    if (driver.generateContent) return "gemini";
    return driver.chat ? "chat" : driver.messages ? "messages" : driver.converse ? "converse" : undefined;
  }
  if (driver[client]) return client;
  if (client === "chat" && driver.messages) return "messages";
  if (client === "messages" && driver.chat) return "chat";
  if (driver.generateContent) return "gemini";
  return undefined;
}
