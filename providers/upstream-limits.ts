// The most the gateway reads of one upstream answer (server.upstream_limits), each bound with the setting that
// raises it: an answer past one is a 502 that names both (providers/http.ts), since only the operator can help it.
import type { UpstreamLimitsConfig } from "../core/generated/types/gateway.ts";
import { MAX_SSE_EVENT_CHARS } from "../core/sse/parse.ts";

/**
 * Most bytes read of a JSON answer to a generation or a count (chat, messages, responses, generateContent,
 * converse): their output is bounded by the model's output tokens (under a MiB of text) plus inline media (a
 * Gemini image model's PNG, a few MiB), so 16 MiB is room enough — and the same bound as one stream event
 * (core/sse/parse.ts MAX_SSE_EVENT_CHARS), since a JSON answer is what a stream's last event can hold.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/**
 * Most bytes read of a media operation's JSON (embeddings, images, videos, rerank): a full embeddings batch as
 * float JSON (2048 inputs x 3072 dimensions, ~130 MB) is the largest legitimate one.
 */
export const MAX_MEDIA_ANSWER_BYTES = 256 * 1024 * 1024;
/** Most bytes of a downloaded media file (an image, a generated video: tens of MB at most). */
export const MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

/** What an answer is, for its bound: a generation's JSON, a media operation's JSON, or a media file downloaded. */
export type AnswerKind = "answer" | "media" | "download";

export interface UpstreamLimits {
  answer: number;
  media: number;
  download: number;
  /** One stream event (all its lines) or line, in characters. */
  eventChars: number;
}

export const DEFAULT_UPSTREAM_LIMITS: Readonly<UpstreamLimits> = Object.freeze({
  answer: MAX_ANSWER_BYTES, media: MAX_MEDIA_ANSWER_BYTES, download: MAX_DOWNLOAD_BYTES, eventChars: MAX_SSE_EVENT_CHARS,
});

/** The gateway.yaml setting that raises each bound, as the error names it. */
export const LIMIT_SETTING: Readonly<Record<AnswerKind | "eventChars", string>> = Object.freeze({
  answer: "server.upstream_limits.answer_bytes",
  media: "server.upstream_limits.media_answer_bytes",
  download: "server.upstream_limits.download_bytes",
  eventChars: "server.upstream_limits.event_chars",
});

/** server.upstream_limits with its defaults. */
export function upstreamLimits(c: UpstreamLimitsConfig | undefined): UpstreamLimits {
  if (!c) return DEFAULT_UPSTREAM_LIMITS;
  return {
    answer: c.answer_bytes ?? MAX_ANSWER_BYTES,
    media: c.media_answer_bytes ?? MAX_MEDIA_ANSWER_BYTES,
    download: c.download_bytes ?? MAX_DOWNLOAD_BYTES,
    eventChars: c.event_chars ?? MAX_SSE_EVENT_CHARS,
  };
}
