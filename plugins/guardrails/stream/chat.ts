// Chat completion chunks: choices[].delta content, refusal, an audio answer's transcript, tool-call argument fragments
// (a custom tool's free-form input as text) and the deprecated function_call's argument fragments, per choice. A
// choice's slots flush into its finish chunk (a chunk may carry text and a finish_reason together); what is left at
// [DONE] goes out in one more chunk shaped like the others. A choice's delta.annotations (url_citation, indexing into
// its content as the upstream wrote it) waits until the content it cites went out, then goes in the chunk that sent
// it, moved to where that text is in what the client got (held together: a client may keep only its last value).
// Nothing of a choice goes out after its finish (a delta an upstream sends it later is dropped, as a chat stream
// carries none), and nothing after the usage chunk: what is still held goes out just before it.
import type { SseEvent } from "../../../core/sse/parse.ts";
import { parseData, type Slots, type StreamAdapter } from "./slots.ts";
import { citedEnd } from "../moves.ts";

/** Slot keys: `${kind}:${choice}` or, for tool calls, `${kind}:${choice}:${tool index}`. */
type Kind = "content" | "refusal" | "tool" | "custom" | "fn" | "transcript";

/** Puts a slot's rest into a delta, in the shape its fragments came in. */
function addRest(d: any, kind: Kind, tool: number, rest: string): void {
  if (kind === "tool") (d.tool_calls ??= []).push({ index: tool, function: { arguments: rest } });
  else if (kind === "custom") (d.tool_calls ??= []).push({ index: tool, custom: { input: rest } });
  else if (kind === "transcript") (d.audio ??= {}).transcript = (typeof d.audio.transcript === "string" ? d.audio.transcript : "") + rest;
  else if (kind === "fn") d.function_call = { arguments: (typeof d.function_call?.arguments === "string" ? d.function_call.arguments : "") + rest };
  else d[kind] = (typeof d[kind] === "string" ? d[kind] : "") + rest;
}

export class ChatStream implements StreamAdapter {
  private last: any;
  /** Per choice: the annotations waiting for the content they cite. */
  private readonly held = new Map<number, unknown[]>();
  /** Choices whose finish_reason went out. */
  private readonly finished = new Set<number>();

  constructor(private readonly slots: Slots) {}

  isTerminal(ev: SseEvent): boolean {
    return ev.data === "[DONE]";
  }

  onEvent(ev: SseEvent): SseEvent[] {
    const c = parseData(ev);
    if (!Array.isArray(c?.choices)) return [ev];
    this.last = c;
    // The usage chunk is the last before [DONE]: the text still held goes out before it.
    if (!c.choices.length && c.usage) return [...this.flush(), ev];
    let changed = false;
    let choices: [any, number][] = c.choices.map((ch: any, i: number) => [ch, typeof ch?.index === "number" ? ch.index : i]);
    if (choices.some(([, idx]) => this.finished.has(idx))) {
      choices = choices.filter(([, idx]) => !this.finished.has(idx));
      if (!choices.length && !c.usage) return [];
      c.choices = choices.map(([ch]) => ch);
      changed = true;
    }
    choices.forEach(([ch, idx]) => {
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
            const input = tc?.custom?.input;
            if (typeof input === "string" && input) {
              const out = this.slots.push(`custom:${idx}:${tc.index ?? 0}`, input);
              if (out !== input) (tc.custom.input = out), (changed = true);
            }
          }
        }
        const tr = d.audio?.transcript;
        if (typeof tr === "string" && tr) {
          const out = this.slots.push(`transcript:${idx}`, tr);
          if (out !== tr) (d.audio.transcript = out), (changed = true);
        }
        const fa = d.function_call?.arguments;
        if (typeof fa === "string" && fa) {
          const out = this.slots.push(`fn:${idx}`, fa, true);
          if (out !== fa) (d.function_call.arguments = out), (changed = true);
        }
      }
      if (d && typeof d === "object" && Array.isArray(d.annotations)) {
        this.held.set(idx, [...(this.held.get(idx) ?? []), ...d.annotations]);
        delete d.annotations;
        changed = true;
      }
      if (ch?.finish_reason) changed = this.flushChoice(ch, idx) || changed;
      if (ch && typeof ch === "object" && this.release(idx, () => (ch.delta ??= {}))) changed = true;
      if (ch?.finish_reason) this.finished.add(idx);
    });
    if (changed) ev.data = JSON.stringify(c);
    return [ev];
  }

  /** The choice's held annotations, moved, into the delta `into` gives, once the content they cite went out. */
  private release(idx: number, into: () => any, all = false): boolean {
    const a = this.held.get(idx);
    const key = `content:${idx}`;
    if (!a || (!all && this.slots.holds(key, citedEnd(a)))) return false;
    this.held.delete(idx);
    this.slots.moveCited(key, a);
    if (!a.length) return false; // every source's url held a secret in its host
    into().annotations = a;
    return true;
  }

  /** Puts the choice's remaining text into this chunk's delta; true when it added any. */
  private flushChoice(ch: any, idx: number): boolean {
    let added = false;
    const d = (ch.delta ??= {});
    for (const key of this.slots.keys()) {
      const [kind, choice, tool] = key.split(":");
      if (Number(choice) !== idx) continue;
      const rest = this.slots.end(key);
      if (!rest) continue;
      addRest(d, kind as Kind, Number(tool), rest);
      added = true;
    }
    return added;
  }

  flush(): SseEvent[] {
    const choices = new Map<number, any>();
    for (const key of this.slots.keys()) {
      const [kind, idx, tool] = key.split(":");
      const rest = this.slots.end(key);
      if (!rest) continue;
      const n = Number(idx);
      const delta = choices.get(n) ?? {};
      choices.set(n, delta);
      addRest(delta, kind as Kind, Number(tool), rest);
    }
    for (const idx of [...this.held.keys()]) {
      this.release(idx, () => {
        if (!choices.has(idx)) choices.set(idx, {});
        return choices.get(idx);
      }, true);
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
