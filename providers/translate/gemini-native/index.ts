// Gemini client -> Gemini upstream (the Gemini API, Gemini on Vertex): the native pair. The body passes through with
// only what the gateway added taken out (`model` and `stream` from the URL, `providerOptions`), to the driver's
// generateContent or streamGenerateContent. Reasoning the gateway encoded for another upstream (a thoughtSignature
// blob, gemini-to-chat/reasoning.ts) is not Gemini's and would be refused: it is removed, and a model turn whose first
// function call has no signature (left without one, or made by another model) gets Google's documented placeholder. Usage:
// this pair reports a JSON answer's; a stream's the driver reports, once per upstream read (codecs/gemini/answer.ts).
// Answers keep the upstream's modelVersion: dispatch names the gateway model id there (core/served-model.ts) and
// keeps the upstream's for x-mg-upstream-model and the traces.
// Gemini sends no end marker: a stream that ends before every candidate has its finishReason (or a blocked prompt
// its blockReason) was cut short, and ends with an error event, as the translated pairs do; one that stalls or breaks
// off after every candidate asked for (candidateCount) finished ends as a complete one, as the translated pairs' does.
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { CallOptions } from "../../../core/contracts/provider.ts";
import type { Translator } from "../../../core/contracts/translator.ts";
import { GatewayError } from "../../../core/errors.ts";
import { geminiStreamError } from "../../codecs/gemini/errors.ts";
import { ENCRYPTED_PREFIX } from "../responses-to-chat/reasoning.ts";
import { fromGeminiUsage } from "../chat-to-gemini/response.ts";
import { endAfterAnswer } from "../end-after-answer.ts";
import { requestedChoices } from "../../../core/metering/output-limit.ts";

/** choices: the candidates asked for (generationConfig.candidateCount; 1 when left out). */
interface State { provider: string; choices?: number }

export const SKIP_SIGNATURE = "skip_thought_signature_validator";

const ours = (sig: unknown) => typeof sig === "string" && sig.startsWith(ENCRYPTED_PREFIX);

/** A model turn whose first function call has no signature (the gateway's blob aside): another model made it. */
function needsPlaceholder(c: any): boolean {
  if (c?.role !== "model" || !Array.isArray(c.parts)) return false;
  const call = c.parts.find((p: any) => p?.functionCall);
  return call !== undefined && (!call.thoughtSignature || ours(call.thoughtSignature));
}

/**
 * contents without the gateway's blobs, and each model turn's first function call signed (its own signature, else
 * Google's placeholder: a call another model made — OpenAI, Claude with or without thinking, a fallback — or a client
 * wrote is refused unsigned by Gemini 3); the same array when there is nothing to change (the common case).
 */
function withoutBlobs(contents: any[]): { contents: any[]; changed: boolean } {
  const touched = (c: any) => needsPlaceholder(c) || c?.parts?.some((p: any) => ours(p?.thoughtSignature));
  if (!contents.some(touched)) return { contents, changed: false };
  const out = contents.map((c) => {
    if (!touched(c)) return c;
    const firstCall = c.parts.findIndex((p: any) => p?.functionCall);
    const parts = c.parts.map((p: any, k: number) => {
      if (ours(p?.thoughtSignature)) {
        const { thoughtSignature: _blob, ...rest } = p;
        p = rest;
      }
      return c.role === "model" && k === firstCall && !p.thoughtSignature ? { ...p, thoughtSignature: SKIP_SIGNATURE } : p;
    });
    return { ...c, parts };
  });
  return { contents: out, changed: true };
}

export const geminiNative: Translator<State> = {
  native: true,
  request(body, _target, opts) {
    const { model: _model, stream, providerOptions: _routing, ...rest } = body;
    const { contents, changed } = withoutBlobs(Array.isArray(rest.contents) ? rest.contents : []);
    return {
      op: stream === true ? "streamGenerateContent" : "generateContent",
      body: changed ? { ...rest, contents } : rest,
      dropped: [],
      state: { provider: opts.provider, choices: requestedChoices(body) },
    };
  },
  response(json: any, _s, call) {
    call.reportUsage(fromGeminiUsage(json?.usageMetadata));
    return json;
  },
  stream: (events, s, call) => relay(events, s, call),
  error: (err) => err,
};

async function* relay(events: AsyncIterable<SseEvent>, s: State, call: CallOptions): AsyncGenerator<SseEvent> {
  /** Candidate index -> whether it has its finishReason yet. */
  const finished = new Map<number, boolean>();
  let blocked = false;
  /** Every candidate that came has its finishReason (or the prompt its blockReason): what EOF needs. */
  const seenFinished = () => (finished.size ? ![...finished.values()].includes(false) : blocked);
  /**
   * Every candidate asked for came and finished (or the prompt was blocked): only the upstream's end is left. With
   * candidateCount 2 and only candidate 0 finished, a stall or break is still the failure.
   */
  const answered = () => blocked || (finished.size >= (s.choices ?? 1) && seenFinished());
  // A stall or break after that ends the stream as the upstream's end would (end-after-answer.ts).
  for await (const ev of endAfterAnswer(events, answered, call.signal)) {
    let g: any;
    try {
      g = JSON.parse(ev.data);
    } catch {
      throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${s.provider} sent a stream event that is not JSON`, { details: { provider: s.provider } });
    }
    if (g?.error) {
      throw geminiStreamError(s.provider, g.error); // judged as its HTTP status: INVALID_ARGUMENT is the client's 400
    }
    if (g?.promptFeedback?.blockReason) blocked = true;
    const cands: any[] = Array.isArray(g?.candidates) ? g.candidates : [];
    for (let i = 0; i < cands.length; i++) {
      const index: number = typeof cands[i]?.index === "number" ? cands[i].index : i;
      if (!finished.get(index)) finished.set(index, !!cands[i]?.finishReason);
    }
    yield { data: ev.data };
  }
  if (!seenFinished()) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${s.provider} ended the stream before a finish reason`, { details: { provider: s.provider } });
}
