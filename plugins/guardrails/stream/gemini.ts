// Gemini stream chunks (each a GenerateContentResponse): text parts per candidate, function calls and code execution
// parts (each whole in one chunk).
// A candidate's rest goes into the chunk that carries its finishReason; what is left at the end goes out as one more
// chunk of the same shape.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { visitJsonValue } from "../walk/json-text.ts";
import { geminiCodePart } from "../walk/answer.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";

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
          if (lastText) lastText.text += rest;
          else ((cand.content ??= { role: "model" }).parts ??= []).push({ text: rest });
          changed = true;
        }
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
