// Gemini stream (alt=sse) -> chat completion chunks, event by event in constant memory.
// Gemini quirks handled: no [DONE] (EOF ends the stream), CRLF framing (the SSE parser accepts every line ending),
// function calls arrive whole (one chunk, one tool index each), STOP after a function call means tool_calls,
// usageMetadata is cumulative (the last one wins), candidates carry their own index (n > 1). A grounded request
// (googleSearch) keeps each candidate's answer text, indexed as it comes (utf16-index.ts), which Gemini's byte offsets
// are converted against: its sources (grounding.ts), whichever chunk carries them, go out all in one delta.annotations
// just before the candidate's finish (as OpenAI's search models send theirs: a client keeping a delta field's last
// value and one joining every piece both get each once). The finishes wait until every candidate has its finish
// reason, so a chunk finishing one candidate while another still streams can add to its sources; then they go out
// with the chunk that finished the last one (an upstream that then stalls or fails does not take the finished answer
// with it; sources a chunk after that carries are dropped, never a second delta.annotations after a finish). Unsearched
// streams keep no text, send no annotations and finish as the finish reason comes. Text or calls a chunk carries for
// a candidate after its finish reason are dropped, as OpenAI's streams carry none after a choice's finish_reason.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { geminiStreamError } from "../../codecs/gemini/errors.ts";
import { finishReasonOf, geminiToOpenAIUsage, toolCallId } from "./response.ts";
import { citesSources, GeminiSources } from "./grounding.ts";
import { Utf16Index } from "./utf16-index.ts";

/**
 * Grounded requests only: `text`, the answer so far; `sources`, once one arrived; `finish`, the finish reason held
 * until every candidate has one (finishes()).
 */
interface CandidateState { started: boolean; tools: number; finished: boolean; text?: Utf16Index; sources?: GeminiSources; finish?: string | null }

export class GeminiToChatStream {
  private id = "";
  private model: string;
  private readonly candidates = new Map<number, CandidateState>();
  usageMetadata: any = undefined;
  done = false;
  /** The prompt was blocked (promptFeedback.blockReason): no candidate will come. */
  private blocked = false;

  /**
   * oneCall: parallel_tool_calls was false; each candidate keeps only its first function call (see response.ts).
   * search: the request asked Gemini to search (googleSearch), so its answer may cite sources.
   * choices: the candidates asked for (chat's n; 1 when left out).
   */
  constructor(private readonly opts: { includeUsage: boolean; provider: string; model: string; created?: number; oneCall?: boolean; search?: boolean; choices?: number }) {
    this.model = opts.model;
  }

  private chunk(index: number, delta: Record<string, unknown>, finish: string | null = null): SseEvent {
    const c: Record<string, unknown> = {
      id: this.id, object: "chat.completion.chunk", created: this.opts.created ?? 0, model: this.model,
      choices: [{ index, delta, logprobs: null, finish_reason: finish }],
    };
    if (this.opts.includeUsage) c.usage = null;
    return { data: JSON.stringify(c) };
  }

  push(ev: SseEvent): SseEvent[] {
    const g = JSON.parse(ev.data);
    if (g?.error) {
      throw geminiStreamError(this.opts.provider, g.error); // judged as its HTTP status: INVALID_ARGUMENT is the client's 400
    }
    if (!this.id) this.id = `chatcmpl-${g.responseId ?? Date.now().toString(36)}`;
    if (g.modelVersion) this.model = g.modelVersion;
    if (g.usageMetadata) this.usageMetadata = g.usageMetadata;
    const out: SseEvent[] = [];
    const cands: any[] = Array.isArray(g.candidates) ? g.candidates : [];
    if (!cands.length && g.promptFeedback?.blockReason) {
      this.blocked = true;
      const s = this.state(0);
      if (!s.started) { s.started = true; out.push(this.chunk(0, { role: "assistant", content: "" })); }
      s.finished = true;
      out.push(this.chunk(0, {}, "content_filter"));
    }
    cands.forEach((c, i) => {
      const index: number = c.index ?? i;
      const s = this.state(index);
      if (!s.started) {
        s.started = true;
        out.push(this.chunk(index, { role: "assistant", content: "" }));
      }
      // Parts for a candidate already finished are dropped: a chat stream carries nothing for a choice after its
      // finish_reason (its finish, and the usage chunk, may already be out).
      for (const p of s.finished ? [] : c.content?.parts ?? []) {
        if (p.functionCall) {
          if (this.opts.oneCall && s.tools > 0) continue;
          const tc = { index: s.tools++, id: toolCallId(p), type: "function", function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) } };
          out.push(this.chunk(index, { tool_calls: [tc] }));
        } else if (typeof p.text === "string" && p.text) {
          if (p.thought !== true) s.text?.append(p.text);
          out.push(this.chunk(index, p.thought === true ? { reasoning_content: p.text } : { content: p.text }));
        }
      }
      if (s.text && citesSources(c)) (s.sources ??= new GeminiSources()).add(c);
      if (c.finishReason && !s.finished) {
        s.finished = true;
        const finish = finishReasonOf(c.finishReason, s.tools > 0);
        if (s.text) s.finish = finish;
        else out.push(this.chunk(index, {}, finish));
      }
    });
    if (this.seenFinished()) out.push(...this.finishes());
    return out;
  }

  /** Every candidate that came has its finish reason (a blocked prompt its one). */
  private seenFinished(): boolean {
    return this.candidates.size > 0 && [...this.candidates.values()].every((s) => s.finished);
  }

  /**
   * Every candidate asked for came and has its finish reason, or the prompt was blocked: what is left is the
   * upstream's end, so a stall or break now ends the stream (end-after-answer.ts). With n: 2 and only candidate 0
   * finished, the second answer is still owed and such an end stays the failure it is.
   */
  answered(): boolean {
    return this.blocked || (this.candidates.size >= (this.opts.choices ?? 1) && this.seenFinished());
  }

  /** The finishes held (grounded candidates'), each after its sources, whole; each goes out once. */
  finishes(): SseEvent[] {
    const out: SseEvent[] = [];
    for (const [index, s] of this.candidates) {
      if (s.finish === undefined) continue;
      if (s.sources?.size) out.push(this.chunk(index, { annotations: s.sources.annotations(s.text!) }));
      out.push(this.chunk(index, {}, s.finish));
      s.finish = undefined;
      // Sent: later sources would only come after the finish.
      s.text = undefined;
      s.sources = undefined;
    }
    return out;
  }

  private state(index: number): CandidateState {
    let s = this.candidates.get(index);
    if (!s) this.candidates.set(index, (s = { started: false, tools: 0, finished: false, ...(this.opts.search ? { text: new Utf16Index() } : {}) }));
    return s;
  }

  /**
   * EOF: Gemini sends no [DONE]. A stream whose candidates never finished was cut short. Without any usageMetadata
   * the usage chunk says null: the ledger bills an estimate this translator cannot know (the client's request size,
   * the text the client got), and 0 tokens would be a claim.
   */
  end(): SseEvent[] {
    this.done = true;
    if (!this.seenFinished()) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.opts.provider} ended the stream before a finish reason`, { details: { provider: this.opts.provider } });
    const out = this.finishes();
    if (this.opts.includeUsage) {
      out.push({ data: JSON.stringify({ id: this.id, object: "chat.completion.chunk", created: this.opts.created ?? 0, model: this.model, choices: [], usage: this.usageMetadata ? geminiToOpenAIUsage(this.usageMetadata) : null }) });
    }
    out.push({ data: "[DONE]" });
    return out;
  }
}
