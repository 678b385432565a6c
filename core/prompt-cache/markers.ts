// Prompt-cache markers (reference §2.7). Pure functions over request bodies.
// Auto placement on a Messages body: at most 4 breakpoints in all, existing markers kept and counted, candidates in
// priority order: last tool, last system block, the end of the stable conversation prefix (the turn before the
// newest user turn), and the newest turn itself (so the next request reads what this one writes). A marker placed
// before an existing 1h marker becomes 1h too, keeping the rule that 1h breakpoints precede 5m ones.
// Anthropic counts every marker toward its 4: the blocks inside a tool_result and the newest SDK's top-level
// cache_control (an automatic breakpoint it puts on the last block) as well.
import { invalidRequest, type GatewayError } from "../errors.ts";
import { Unsupported } from "../contracts/translator.ts";

export const MAX_BREAKPOINTS = 4;
type Block = { type?: string; cache_control?: { type: string; ttl?: string }; [k: string]: unknown };
const UNMARKABLE = new Set(["thinking", "redacted_thinking"]);

const isBlock = (b: unknown): b is Block => !!b && typeof b === "object";

/** Every markable position in prefix order: tools -> system -> messages, a tool result's own blocks after it. */
function positions(body: any): Block[] {
  const out: Block[] = [];
  if (Array.isArray(body.tools)) out.push(...body.tools.filter(isBlock));
  if (Array.isArray(body.system)) out.push(...body.system.filter(isBlock));
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!Array.isArray(m?.content)) continue;
    for (const b of m.content.filter(isBlock)) {
      out.push(b);
      if (Array.isArray(b.content)) out.push(...b.content.filter(isBlock));
    }
  }
  return out;
}

/** The breakpoints a Messages body carries, as Anthropic counts them toward its limit. */
export function countMarkers(body: any): number {
  return positions(body).filter((b) => b.cache_control).length + (body?.cache_control ? 1 : 0);
}

/** A 400 naming cache_control when a Messages body carries more breakpoints than Anthropic takes. */
export function breakpointError(body: any): GatewayError | undefined {
  const n = countMarkers(body);
  if (n <= MAX_BREAKPOINTS) return undefined;
  return invalidRequest(`at most ${MAX_BREAKPOINTS} cache_control breakpoints are allowed (found ${n}, counting those inside tool results and a top-level cache_control)`, "cache_control");
}

/**
 * A Messages body translated for Anthropic (from chat, Responses, Gemini): automatic markers placed when asked, and
 * too many markers refused before any upstream call. Unsupported: a target that drops markers may still serve it.
 */
export function markTranslated(body: any, auto: boolean): void {
  if (auto) placeAutoMarkers(body);
  const err = breakpointError(body);
  if (err) throw new Unsupported(err);
}

function lastMarkable(content: Block[]): Block | undefined {
  for (let i = content.length - 1; i >= 0; i--) {
    const b = content[i]!;
    if (!UNMARKABLE.has(b.type ?? "") && !(b.type === "text" && !b.text)) return b;
  }
  return undefined;
}

function asBlocks(holder: any, key: string): Block[] | undefined {
  const v = holder[key];
  if (typeof v === "string") {
    if (!v) return undefined;
    holder[key] = [{ type: "text", text: v }];
  }
  return Array.isArray(holder[key]) ? holder[key] : undefined;
}

/** Places automatic markers on a Messages request body, in place. Returns how many it added. */
export function placeAutoMarkers(body: any): number {
  let room = MAX_BREAKPOINTS - countMarkers(body);
  if (room <= 0) return 0;
  const candidates: Block[] = [];
  if (Array.isArray(body.tools) && body.tools.length) candidates.push(body.tools[body.tools.length - 1]);
  const system = body.system !== undefined ? asBlocks(body, "system") : undefined;
  if (system?.length) { const b = lastMarkable(system); if (b) candidates.push(b); }
  const msgs: any[] = Array.isArray(body.messages) ? body.messages : [];
  let lastUser = -1;
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].role === "user") { lastUser = i; break; }
  if (lastUser > 0) {
    const c = asBlocks(msgs[lastUser - 1], "content");
    const b = c && lastMarkable(c);
    if (b) candidates.push(b);
  }
  // A top-level cache_control already puts a breakpoint on the newest turn.
  if (msgs.length && !body.cache_control) {
    const c = asBlocks(msgs[msgs.length - 1], "content");
    const b = c && lastMarkable(c);
    if (b) candidates.push(b);
  }
  const order = positions(body);
  let last1h = -1;
  order.forEach((b, i) => { if (b.cache_control?.ttl === "1h") last1h = i; });
  if (body.cache_control?.ttl === "1h") last1h = order.length; // the automatic breakpoint sits after every block
  let added = 0;
  for (const b of candidates) {
    if (room <= 0) break;
    if (b.cache_control) continue;
    b.cache_control = order.indexOf(b) < last1h ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
    room--;
    added++;
  }
  return added;
}

/** Does a chat body carry the cache_control vendor extension anywhere? */
export function hasChatCacheMarkers(body: any): boolean {
  if (Array.isArray(body?.tools) && body.tools.some((t: any) => t?.cache_control)) return true;
  for (const m of body?.messages ?? []) {
    if (m?.cache_control) return true;
    if (Array.isArray(m?.content) && m.content.some((p: any) => p?.cache_control)) return true;
  }
  return false;
}

/** A copy of a chat body without cache_control, for upstreams that do not understand markers. */
export function stripChatCacheMarkers(body: any): any {
  const strip = (o: any) => {
    if (!o || typeof o !== "object" || !("cache_control" in o)) return o;
    const { cache_control: _drop, ...rest } = o;
    return rest;
  };
  return {
    ...body,
    tools: Array.isArray(body.tools) ? body.tools.map(strip) : body.tools,
    messages: body.messages.map((m: any) => {
      const mm = strip(m);
      return Array.isArray(mm.content) ? { ...mm, content: mm.content.map(strip) } : mm;
    }),
  };
}
