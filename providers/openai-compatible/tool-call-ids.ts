// Tool-call ids as the host takes them. A history replayed from another provider carries that provider's ids
// (Anthropic's `toolu_01…`, Converse's `tooluse_…`, Kimi's `functions.<tool>:<n>`), and some hosts refuse them with a
// 400 for the whole request: Mistral takes only 9 letters or digits (protocols-2.md §2.10.4), OpenAI's chat at most
// 40 characters and its Responses call_ids at most 64. Each refused id is rewritten, the same way in the call and in
// its result so they still pair; ids the host takes go as sent, and answers are not touched (the host's own ids suit
// every client). Only this request's ids are rewritten: the client keeps its own, and sends them again next turn.
import { createHash } from "node:crypto";

export type ToolIdRule = "mistral" | "openai" | "passthrough";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;
/** OpenAI's chat `tool_calls[].id` and `tool_call_id`: "string too long" over 40. */
const OPENAI_CHAT_MAX = 40;
/** OpenAI's Responses `call_id`: "string too long" over 64. */
const OPENAI_RESPONSES_MAX = 64;
const HASH = 8;

const digest = (id: string, attempt: number) => createHash("sha256").update(attempt ? `${id}\u0000${attempt}` : id).digest();

/** 9 letters or digits from the id's hash (another attempt when that one is taken). */
function nineAlnum(id: string, attempt: number): string {
  const bytes = digest(id, attempt);
  let out = "";
  for (let i = 0; i < 9; i++) out += ALNUM[bytes[i]! % ALNUM.length];
  return out;
}

/** The id's start cut before a hash of it, `max` long at most: two long ids with the same start stay apart. */
const shortened = (max: number) => (id: string, attempt: number) => `${id.slice(0, max - HASH - 1)}_${digest(id, attempt).toString("hex").slice(0, HASH)}`;

interface IdForm {
  fits(id: string): boolean;
  make(id: string, attempt: number): string;
}

const CHAT_FORMS: Record<Exclude<ToolIdRule, "passthrough">, IdForm> = {
  mistral: { fits: (id) => MISTRAL_ID.test(id), make: nineAlnum },
  openai: { fits: (id) => id.length <= OPENAI_CHAT_MAX, make: shortened(OPENAI_CHAT_MAX) },
};
const RESPONSES_FORM: IdForm = { fits: (id) => id.length <= OPENAI_RESPONSES_MAX, make: shortened(OPENAI_RESPONSES_MAX) };

/**
 * Original id -> the id sent, for the ids `form` refuses (empty when none is). Ids that fit are kept and no rewritten
 * one may equal another id of the request: 9 characters leave room for a collision, which takes the next attempt.
 */
function renames(ids: string[], form: IdForm): Map<string, string> {
  const out = new Map<string, string>();
  const refused = [...new Set(ids)].filter((id) => !form.fits(id));
  if (!refused.length) return out;
  const taken = new Set(ids.filter((id) => form.fits(id)));
  for (const id of refused) {
    let attempt = 0;
    let sent = form.make(id, attempt);
    while (taken.has(sent)) sent = form.make(id, ++attempt);
    taken.add(sent);
    out.set(id, sent);
  }
  return out;
}

/** Chat: assistant `tool_calls[].id` and tool messages' `tool_call_id`; the same array when every id fits. */
export function chatToolIdsFor(messages: unknown, rule: ToolIdRule): unknown {
  if (rule === "passthrough" || !Array.isArray(messages)) return messages;
  const ids: string[] = [];
  for (const m of messages) {
    if (typeof m?.tool_call_id === "string") ids.push(m.tool_call_id);
    if (Array.isArray(m?.tool_calls)) for (const c of m.tool_calls) if (typeof c?.id === "string") ids.push(c.id);
  }
  const map = renames(ids, CHAT_FORMS[rule]);
  if (!map.size) return messages;
  return messages.map((m: any) => {
    const result = typeof m?.tool_call_id === "string" && map.has(m.tool_call_id);
    const calls = Array.isArray(m?.tool_calls) && m.tool_calls.some((c: any) => map.has(c?.id));
    if (!result && !calls) return m;
    const out = { ...m };
    if (result) out.tool_call_id = map.get(m.tool_call_id);
    if (calls) out.tool_calls = m.tool_calls.map((c: any) => (map.has(c?.id) ? { ...c, id: map.get(c.id) } : c));
    return out;
  });
}

/** Responses (OpenAI's rule): `call_id` of the calls and outputs in `input`; the same array when every id fits. */
export function responsesCallIdsFor(input: unknown, rule: ToolIdRule): unknown {
  if (rule !== "openai" || !Array.isArray(input)) return input;
  const ids = input.map((it: any) => it?.call_id).filter((id): id is string => typeof id === "string");
  const map = renames(ids, RESPONSES_FORM);
  if (!map.size) return input;
  return input.map((it: any) => (map.has(it?.call_id) ? { ...it, call_id: map.get(it.call_id) } : it));
}
