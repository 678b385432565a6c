// Which stop sequence a Converse answer stopped at. Converse returns a model's own response fields only at the paths
// the request asks in additionalModelResponseFieldPaths (reference protocols-2 §2.2): Claude's answer names the match
// at /stop_sequence (JSON, the Messages API's field) and /delta/stop_sequence (a stream's message_delta, where
// ConverseStream's messageStop gives it, §2.4; vercel/ai asks that one). Only Claude is asked: no other family
// documents the field. Where the answer names none, the one sequence the client sent is the one that matched; of
// several it cannot be said, and the stop is left to finish_reason (end_turn, stop_sequence null), never
// stop_sequence with a null sequence, which Anthropic never sends.
import { isConverseClaude } from "../../../core/metering/output-limit.ts";
import type { UpstreamStop } from "../upstream-stop.ts";

const STOP_SEQUENCE_PATHS = ["/stop_sequence", "/delta/stop_sequence"];

/** The Converse body asking Claude which stop sequence matched, beside any paths it already asks; else as it was. */
export function askStopSequence(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown> {
  const stops = (body.inferenceConfig as { stopSequences?: unknown[] } | undefined)?.stopSequences;
  if (!isConverseClaude(upstreamModel) || !stops?.length) return body;
  const asked = Array.isArray(body.additionalModelResponseFieldPaths) ? body.additionalModelResponseFieldPaths : [];
  body.additionalModelResponseFieldPaths = [...new Set([...asked, ...STOP_SEQUENCE_PATHS])];
  return body;
}

/**
 * What finish_reason folds away (upstream-stop.ts): Converse's stop_sequence with the sequence that matched (as the
 * answer names it, else the only one sent) and model_context_window_exceeded. `sent`: the request's stopSequences.
 */
export function converseStopOf(reason: unknown, fields: any, sent: readonly string[]): UpstreamStop | undefined {
  if (reason === "model_context_window_exceeded") return { reason };
  if (reason !== "stop_sequence") return undefined;
  const named = fields?.stop_sequence ?? fields?.delta?.stop_sequence;
  if (typeof named === "string") return { reason, sequence: named };
  return sent.length === 1 ? { reason, sequence: sent[0]! } : undefined;
}
