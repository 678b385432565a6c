// Gemini stream chunks (each a GenerateContentResponse): text parts per candidate, function calls and code execution
// parts (each whole in one chunk).
// A candidate's rest goes into the chunk that carries its finishReason; what is left at the end goes out as one more
// chunk of the same shape.
// No chunk carries an empty text part beside another part: Gemini CLI (0.61) leaves out of its history every chunk
// with an empty text part, and the other parts go with it (the held rest put beside a translator's empty finish part
// was lost: a short answer became an "empty response" it asked for again). A text part whose text the window holds
// whole is left out; a candidate with nothing else keeps one empty text part, a shape Gemini itself sends, which
// Gemini CLI passes over with nothing lost (@google/genai drops a streamed turn from its chat history when any chunk
// has no parts, and a chunk not sent would leave a stream cut before its first text without its 200).
import type { SseEvent } from "../../../core/sse/parse.ts";
import { visitJsonValue } from "../walk/json-text.ts";
import { geminiCodePart } from "../walk/answer.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";

/** A text part with nothing but its empty text (Gemini CLI's test: thought parts and signed parts are kept). */
const blank = (p: any): boolean => !!p && typeof p === "object" && p.text === "" && p.thought !== true && Object.keys(p).every((k) => k === "text" || k === "thought");

export class GeminiStream implements StreamAdapter {
  private last: any;

  constructor(private readonly slots: Slots) {}

  /** The Gemini API has no end event: the stream's end is the answer's. */
  isTerminal(): boolean {
    return false;
  }

  onEvent(ev: SseEvent): SseEvent[] {
    const c = parseData(ev);
    if (!Array.isArray(c?.candidates)) return [ev];
    this.last = c;
    let changed = false;
    c.candidates.forEach((cand: any, i: number) => {
      const idx = typeof cand?.index === "number" ? cand.index : i;
      const parts = cand?.content?.parts;
      let lastText: any;
      if (Array.isArray(parts)) {
        for (const p of parts) {
          if (!p || typeof p !== "object" || p.thought === true) continue;
          if (typeof p.text === "string" && p.text) {
            const out = this.slots.push(`c${idx}`, p.text);
            if (out !== p.text) (p.text = out), (changed = true);
            lastText = p;
          }
          if (p.functionCall?.args && typeof p.functionCall.args === "object") {
            visitJsonValue(p.functionCall.args, (s) => this.slots.run.output(s));
            changed = true;
          }
          if (geminiCodePart(p, (s) => this.slots.run.output(s))) changed = true;
        }
      }
      if (cand?.finishReason) {
        const rest = this.slots.end(`c${idx}`);
        if (rest) {
          // Into the candidate's last text, else into its empty text part (a translator's finish), else a part of its own.
          const into = lastText ?? (Array.isArray(parts) ? parts.find(blank) : undefined);
          if (into) into.text += rest;
          else ((cand.content ??= { role: "model" }).parts ??= []).push({ text: rest });
          changed = true;
        }
      }
      const now = cand?.content?.parts;
      if (Array.isArray(now) && now.some(blank)) {
        const kept = now.filter((p: any) => !blank(p));
        if (kept.length || now.length > 1) (cand.content.parts = kept.length ? kept : [{ text: "" }]), (changed = true);
      }
    });
    if (changed) ev.data = JSON.stringify(c);
    return [ev];
  }

  flush(): SseEvent[] {
    const candidates: any[] = [];
    for (const key of this.slots.keys()) {
      const rest = this.slots.end(key);
      if (rest) candidates.push({ content: { role: "model", parts: [{ text: rest }] }, index: Number(key.slice(1)) });
    }
    if (!candidates.length) return [];
    const chunk: Record<string, unknown> = { candidates };
    if (this.last?.modelVersion) chunk.modelVersion = this.last.modelVersion;
    if (this.last?.responseId) chunk.responseId = this.last.responseId;
    return [{ data: JSON.stringify(chunk) }];
  }
}
