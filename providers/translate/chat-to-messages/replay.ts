// A Claude tool loop with thinking on needs the turn that made the calls sent back with its signed thinking first
// (Anthropic refuses it otherwise). Chat clients that rebuild assistant messages from known fields only (the openai
// SDK's runTools from 6.49: content, tool_calls, refusal, …) drop reasoning_details / thinking_blocks, so:
// - the answer's signed reasoning is kept by the gateway (per project, keyed by the turn's first tool-call id, which
//   every client sends back and is unique per answer; a legacy function_call, which has no id, by the conversation
//   before it, its name and arguments: legacy-replay.ts) — `keptReasoning`;
// - a request whose continuing turn comes back without it asks for it by those ids (`recallIds`) and gets it put back
//   (`withRecalled`);
// - when nothing can be recovered (kept too long ago, another gateway store, a value too large to keep), thinking is
//   turned off for that request and the knob that asked for it is named in x-mg-dropped-params — the request
//   succeeds, without thinking, rather than failing.
import type { Target } from "../../../core/contracts/provider.ts";
import { chatThinkingTokens } from "../../../core/metering/thinking.ts";
import { replayedThinking } from "./reasoning.ts";
import { legacyContinuingTurn } from "./legacy-replay.ts";

/** Larger reasoning is not kept (a thinking budget of ~16k tokens with its signature stays well below). */
export const MAX_KEPT_BYTES = 256 * 1024;

/** The assistant message whose tool calls the conversation's last tool results answer, if it ends in a tool loop. */
export function continuingTurn(messages: unknown): any | undefined {
  if (!Array.isArray(messages)) return undefined;
  const i = messages.findLastIndex((m: any) => m?.role === "assistant");
  const turn = messages[i];
  if (i < 0 || !Array.isArray(turn?.tool_calls) || !turn.tool_calls.length) return undefined;
  return messages.slice(i + 1).some((m: any) => m?.role === "tool") ? turn : undefined;
}

/** The tool-call ids under which the continuing turn's reasoning may have been kept, when the request needs it. */
export function recallIds(body: any, target: Target): string[] {
  if (chatThinkingTokens(body, target) === undefined) return [];
  const turn = continuingTurn(body?.messages);
  if (!turn) {
    const legacy = legacyContinuingTurn(body?.messages); // a legacy function_call (legacy-replay.ts)
    return legacy && !replayedThinking(legacy.turn).length ? [legacy.key] : [];
  }
  if (replayedThinking(turn).length) return [];
  return turn.tool_calls.map((tc: any) => tc?.id).filter((id: unknown): id is string => typeof id === "string" && id.length > 0);
}

/** The body with the continuing turn's reasoning put back from what was kept; the same body when nothing was. */
export function withRecalled(body: any, recalled: ReadonlyMap<string, string> | undefined): any {
  if (!recalled?.size) return body;
  let turn = continuingTurn(body.messages);
  let value = turn?.tool_calls.map((tc: any) => recalled.get(tc?.id)).find((v: unknown) => typeof v === "string");
  if (!turn) {
    const legacy = legacyContinuingTurn(body.messages);
    turn = legacy?.turn;
    value = legacy && recalled.get(legacy.key);
  }
  if (!value) return body;
  let details: unknown;
  try {
    details = JSON.parse(value);
  } catch {
    return body;
  }
  if (!Array.isArray(details)) return body;
  return { ...body, messages: body.messages.map((m: any) => (m === turn ? { ...m, reasoning_details: details } : m)) };
}

/** What to keep of an answer: its signed reasoning under its first tool call's id (undefined when there is none). */
export function keptReasoning(toolCallIds: string[], details: unknown[]): [id: string, value: string] | undefined {
  if (!toolCallIds.length || !details.length) return undefined;
  const value = JSON.stringify(details);
  return value.length <= MAX_KEPT_BYTES ? [toolCallIds[0]!, value] : undefined;
}

/** Does the translated conversation end in a tool loop whose assistant turn lacks the thinking Anthropic wants first? */
export function missingThinking(messages: { role: string; content: unknown }[]): boolean {
  const last = messages.at(-1);
  const prev = messages.at(-2);
  const results = Array.isArray(last?.content) && last.content.some((b: any) => b?.type === "tool_result");
  if (last?.role !== "user" || !results || prev?.role !== "assistant" || !Array.isArray(prev.content)) return false;
  const first = (prev.content as { type?: string }[])[0]?.type;
  return first !== "thinking" && first !== "redacted_thinking";
}
