// Chat completion chunks: choices[].delta content, refusal and tool-call argument fragments, per choice. A choice's
// slots flush into its finish chunk (a chunk may carry text and a finish_reason together); what is left at [DONE]
// goes out in one more chunk shaped like the others.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";

export class ChatStream implements StreamAdapter {
  private last: any;

  constructor(private readonly slots: Slots) {}

  isTerminal(ev: SseEvent): boolean {
    return ev.data === "[DONE]";
  }

  onEvent(ev: SseEvent): SseEvent[] {
    const c = parseData(ev);
    if (!Array.isArray(c?.choices)) return [ev];
    this.last = c;
    let changed = false;
    c.choices.forEach((ch: any, i: number) => {
      const idx = typeof ch?.index === "number" ? ch.index : i;
      const d = ch?.delta;
      if (d && typeof d === "object") {
        for (const field of ["content", "refusal"] as const) {
          if (typeof d[field] === "string" && d[field]) {
            const out = this.slots.push(`${field}:${idx}`, d[field]);
            if (out !== d[field]) (d[field] = out), (changed = true);
          }
        }
        if (Array.isArray(d.tool_calls)) {
          for (const tc of d.tool_calls) {
            const a = tc?.function?.arguments;
            if (typeof a === "string" && a) {
              const out = this.slots.push(`tool:${idx}:${tc.index ?? 0}`, a, true);
              if (out !== a) (tc.function.arguments = out), (changed = true);
            }
          }
        }
      }
      if (ch?.finish_reason) changed = this.flushChoice(ch, idx) || changed;
    });
    if (changed) ev.data = JSON.stringify(c);
    return [ev];
  }

  /** Puts the choice's remaining text into this chunk's delta; true when it added any. */
  private flushChoice(ch: any, idx: number): boolean {
    let added = false;
    const d = (ch.delta ??= {});
    for (const field of ["content", "refusal"] as const) {
      const rest = this.slots.end(`${field}:${idx}`);
      if (rest) (d[field] = (typeof d[field] === "string" ? d[field] : "") + rest), (added = true);
    }
    for (const key of this.slots.keys()) {
      const m = /^tool:(\d+):(\d+)$/.exec(key);
      if (!m || Number(m[1]) !== idx) continue;
      const rest = this.slots.end(key);
      if (!rest) continue;
      (d.tool_calls ??= []).push({ index: Number(m[2]), function: { arguments: rest } });
      added = true;
    }
    return added;
  }

  flush(): SseEvent[] {
    const choices = new Map<number, any>();
    for (const key of this.slots.keys()) {
      const [field, idx, tool] = key.split(":");
      const rest = this.slots.end(key);
      if (!rest) continue;
      const n = Number(idx);
      const delta = choices.get(n) ?? {};
      choices.set(n, delta);
      if (field === "tool") (delta.tool_calls ??= []).push({ index: Number(tool), function: { arguments: rest } });
      else delta[field!] = rest;
    }
    if (!choices.size) return [];
    const base = this.last ?? {};
    const chunk = {
      id: base.id, object: "chat.completion.chunk", created: base.created, model: base.model,
      choices: [...choices].map(([index, delta]) => ({ index, delta, finish_reason: null })),
    };
    return [{ data: JSON.stringify(chunk) }];
  }
}
