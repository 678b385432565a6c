// Prompt-cache markers on a Converse body (reference protocols-2 §2.2). The translation notes each block a client
// marked (cache_control on a content part, a message, a tool); this turns the marks into `cachePoint` blocks after
// them, in toolConfig.tools, system and messages, with the marker's ttl (5m | 1h). With caching "auto" the Anthropic
// placement rules (core/prompt-cache/markers.ts) run over a Messages-shaped view of the same blocks. Bedrock takes at
// most 4 cache points: past that the earliest are left out (the last covers the longest prefix), named cache_control.
import { countMarkers, MAX_BREAKPOINTS, placeAutoMarkers } from "../../../core/prompt-cache/markers.ts";
import { isConverseClaude } from "../../../core/metering/output-limit.ts";

export type Block = Record<string, unknown>;
export interface Turn { role: "user" | "assistant"; content: Block[] }
export interface Marker { type?: string; ttl?: string }
/** The blocks a client marked, keyed by the Converse block they follow. */
export type Marks = Map<Block, Marker>;

// Nova caches system and messages but not tools; families without prompt caching get no automatic points.
const cachesTools = (model: string) => isConverseClaude(model);
const cachesAuto = (model: string) => isConverseClaude(model) || /(^|[./])amazon\.nova/.test(model);

export const markerOf = (v: unknown): Marker | undefined => (v && typeof v === "object" ? v as Marker : undefined);

type ViewBlock = { type: string; text?: unknown; cache_control?: Marker };
const view = (b: Block, marks: Marks): ViewBlock => ({
  // Reasoning cannot carry a marker (Anthropic's thinking blocks); the placement skips "thinking".
  type: "reasoningContent" in b ? "thinking" : "text" in b ? "text" : Object.keys(b)[0] ?? "",
  text: b.text,
  cache_control: marks.get(b),
});

function cachePoint(m: Marker): Block {
  return { cachePoint: typeof m.ttl === "string" ? { type: "default", ttl: m.ttl } : { type: "default" } };
}

function emit(blocks: Block[], views: ViewBlock[]): Block[] {
  const out: Block[] = [];
  blocks.forEach((b, i) => {
    out.push(b);
    const m = views[i]!.cache_control;
    if (m) out.push(cachePoint(m));
  });
  return out;
}

/** Puts the cache points in place (tools may be undefined: no toolConfig). Returns whether any marker was left out. */
export function placeCachePoints(parts: { tools?: Block[]; system: Block[]; turns: Turn[] }, marks: Marks, auto: boolean, model: string): boolean {
  const toolsCache = cachesTools(model);
  let dropped = false;
  const toolViews = parts.tools?.map((b) => view(b, marks));
  if (toolViews && !toolsCache) for (const v of toolViews) if (v.cache_control) { delete v.cache_control; dropped = true; }
  const body = {
    tools: toolsCache ? toolViews : undefined,
    system: parts.system.map((b) => view(b, marks)),
    messages: parts.turns.map((t) => ({ role: t.role, content: t.content.map((b) => view(b, marks)) })),
  };
  if (auto && cachesAuto(model)) placeAutoMarkers(body);
  let excess = countMarkers(body) - MAX_BREAKPOINTS;
  if (excess > 0) {
    dropped = true;
    const inOrder = [...(body.tools ?? []), ...body.system, ...body.messages.flatMap((m) => m.content)];
    for (const v of inOrder) {
      if (excess <= 0) break;
      if (v.cache_control) { delete v.cache_control; excess--; }
    }
  }
  if (parts.tools && toolViews) parts.tools.splice(0, parts.tools.length, ...emit(parts.tools, toolViews));
  parts.system.splice(0, parts.system.length, ...emit(parts.system, body.system));
  parts.turns.forEach((t, i) => { t.content = emit(t.content, body.messages[i]!.content); });
  return dropped;
}
