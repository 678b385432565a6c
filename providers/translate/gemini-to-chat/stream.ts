// Chat completion chunks -> Gemini stream events (`data: <GenerateContentResponse>`, no [DONE]), one chunk at a time,
// holding back only calls and reasoning still to place: text and thought deltas go out as they come; function calls go out whole (as Gemini sends
// them), with the finish reason and the usage in one last event once the upstream's stream has ended (the chat usage
// chunk comes after the finish chunk). The reasoning to replay (reasoning_details, each block whole; for a chat
// upstream also its reasoning text) waits for the next non-thought part to carry it (reasoning.ts). Refusal fragments
// (delta.refusal) are text, and the finish reason SAFETY, as in response.ts. A stream that ends before any finish
// reason was cut short: an error.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { GatewayError } from "../../../core/errors.ts";
import { throwIfChatStreamError } from "../chat-stream-error.ts";
import { reasoningText } from "../messages-to-chat/reasoning.ts";
import { attachReasoning, finishReasonOf, functionCallPart, namedModel, refusalText, responseIdOf, usageMetadataOf, type AnswerContext } from "./response.ts";
import type { ReasoningText } from "./reasoning.ts";

interface ToolState { id: string; name: string; args: string }
interface CandidateState { tools: Map<number, ToolState>; details: unknown[]; text: ReasoningText; refused: boolean; finish?: string }

export class ChatToGeminiStream {
  private responseId = "";
  /** The model the upstream's chunks name (its own id: dispatch names the gateway's in modelVersion). */
  private model: string | undefined;
  private usage: unknown = undefined;
  private readonly candidates = new Map<number, CandidateState>();

  constructor(private readonly ctx: AnswerContext & { provider: string }) {}

  private state(index: number): CandidateState {
    let s = this.candidates.get(index);
    if (!s) this.candidates.set(index, (s = { tools: new Map(), details: [], text: { text: "" }, refused: false }));
    return s;
  }

  private event(candidates: unknown[], extra: Record<string, unknown> = {}): SseEvent {
    return { data: JSON.stringify({ candidates, ...extra, modelVersion: this.model ?? this.ctx.model, responseId: this.responseId }) };
  }

  push(ev: SseEvent): SseEvent[] {
    if (ev.data === "[DONE]") return [];
    let chunk: any;
    try {
      chunk = JSON.parse(ev.data);
    } catch {
      throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.ctx.provider} sent a stream event that is not JSON`, { details: { provider: this.ctx.provider } });
    }
    throwIfChatStreamError(chunk, this.ctx.provider);
    this.responseId ||= responseIdOf(chunk?.id);
    this.model ??= namedModel(chunk?.model);
    if (chunk?.usage) this.usage = chunk.usage;
    const out: unknown[] = [];
    for (const c of Array.isArray(chunk?.choices) ? chunk.choices : []) {
      const index: number = typeof c.index === "number" ? c.index : 0;
      const s = this.state(index);
      const d = c.delta ?? {};
      const parts: Record<string, unknown>[] = [];
      if (Array.isArray(d.reasoning_details)) s.details.push(...d.reasoning_details);
      const thought = reasoningText(d);
      if (this.ctx.thoughts && thought.text) parts.push({ text: thought.text, thought: true });
      // Only a chat upstream gets its text back (reasoning.ts): kept for nothing else.
      if (thought.text && this.ctx.flavor === "chat") s.text = { field: s.text.field ?? thought.field, text: s.text.text + thought.text };
      if (typeof d.content === "string" && d.content) parts.push({ text: d.content });
      const refusal = refusalText(d);
      if (refusal) {
        parts.push({ text: refusal });
        s.refused = true;
      }
      if (parts.some((p) => p.thought !== true)) {
        attachReasoning(parts, s.details.splice(0), this.ctx, s.text);
        s.text = { text: "" };
      }
      for (const tc of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
        const at: number = typeof tc.index === "number" ? tc.index : s.tools.size;
        let t = s.tools.get(at);
        if (!t) s.tools.set(at, (t = { id: "", name: "", args: "" }));
        if (typeof tc.id === "string" && tc.id) t.id = tc.id;
        if (typeof tc.function?.name === "string" && tc.function.name) t.name = tc.function.name;
        if (typeof tc.function?.arguments === "string") t.args += tc.function.arguments;
      }
      if (c.finish_reason) s.finish = c.finish_reason;
      if (parts.length) out.push({ content: { role: "model", parts }, index });
    }
    return out.length ? [this.event(out)] : [];
  }

  /** The upstream's stream ended: the whole function calls, the finish reasons and the usage, in one event. */
  end(): SseEvent[] {
    const states = [...this.candidates].filter(([, s]) => s.finish !== undefined);
    if (!states.length) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${this.ctx.provider} ended the stream before a finish reason`, { details: { provider: this.ctx.provider } });
    const candidates = states.map(([index, s]) => {
      const parts = [...s.tools.entries()].sort(([a], [b]) => a - b).map(([, t]) => functionCallPart(t.id, t.name, t.args));
      attachReasoning(parts, s.details, this.ctx, s.text);
      // The SDKs' chats drop a whole streamed turn (and the question before it) when any chunk has no parts: the
      // finish rides on an empty text part, a shape Gemini itself sends.
      if (!parts.length) parts.push({ text: "" });
      return { content: { role: "model", parts }, finishReason: finishReasonOf(s.finish, s.refused), index };
    });
    return [this.event(candidates, this.usage ? { usageMetadata: usageMetadataOf(this.usage) } : {})];
  }
}
