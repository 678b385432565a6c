// What the simulated model "decides" to answer: text, tool calls or structured output — deterministic for a
// given request, so tests and demos are repeatable.
import { createHash } from "node:crypto";
import { GatewayError } from "../../core/errors.ts";
import { chooseTools, wordsOf } from "./tool-choice.ts";
import { validInstance, type InstanceHints } from "./schema-instance.ts";
import { splitTokens } from "./tokens.ts";
import { statedOutputLimit } from "../../core/metering/output-limit.ts";

export interface PlannedToolCall { id: string; name: string; arguments: string }
export interface Plan {
  /** Content tokens (pieces) to stream, already cut by max_tokens / stop. */
  pieces: string[];
  toolCalls: PlannedToolCall[];
  finishReason: "stop" | "length" | "tool_calls";
  /** The stop sequence the text was cut at, when that ended it (Anthropic's stop_reason: stop_sequence names it). */
  stopSequence?: string;
}

const FILLER = [
  "The simulator answers every model id with deterministic text, so demos and tests behave the same on every run.",
  "Responses stream in many chunks at the configured time to first token and tokens per second.",
  "Usage counts are computed from the same tokens that were streamed, so metering can be checked end to end.",
  "Switch to a live key and a configured provider to reach the real model behind this id.",
  "Tool calls and structured output follow the JSON Schema in the request.",
];

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: any) => (typeof p?.text === "string" ? p.text : "")).join(" ");
  return "";
}

function seedOf(body: any, choice: number): number {
  const h = createHash("sha256").update(JSON.stringify(body.messages ?? [])).update(String(body.seed ?? "")).update(String(choice)).digest();
  return h.readUInt32BE(0);
}

function limitPieces(text: string, body: any): { pieces: string[]; finish: "stop" | "length"; stopSequence?: string } {
  const stops: string[] = body.stop == null ? [] : Array.isArray(body.stop) ? body.stop : [body.stop];
  let cut = text;
  // The sequence that cut last is the one that occurs first: the one a real model would have stopped at.
  let matched: string | undefined;
  for (const s of stops) {
    const at = s ? cut.indexOf(s) : -1;
    if (at >= 0) {
      cut = cut.slice(0, at);
      matched = s;
    }
  }
  const pieces = splitTokens(cut);
  const max = statedOutputLimit(body);
  if (max !== undefined && pieces.length > max) return { pieces: pieces.slice(0, max), finish: "length" };
  return { pieces, finish: "stop", ...(matched === undefined ? {} : { stopSequence: matched }) };
}

/**
 * Blocks an agent wraps in a tag of its own inside a user message: Claude Code's <system-reminder>, Qwen Code's
 * <task-notification> when a background agent ends. They inform; they are not the user asking.
 */
const TAGGED = /<([A-Za-z][\w-]*)(?:\s[^>]*)?>[\s\S]*?<\/\1>/g;
const ownText = (m: any) => textOf(m?.content).replace(TAGGED, " ").trim();

/** A file name the user wrote (note.txt, src/app.ts), for a tool's path argument. */
const fileNames = (text: string) => text.match(/[\w./~-]*\w\.[A-Za-z0-9]{1,8}\b/g) ?? [];

export function planChoice(body: any, model: string, choice: number): Plan {
  // System and developer messages (anywhere, e.g. Claude Code's after the user turn) instruct; they are not turns.
  const messages: any[] = (body.messages ?? []).filter((m: any) => m?.role !== "system" && m?.role !== "developer");
  // The turn is the user's last request: the last user message with words of its own (a reminder or notification
  // after a tool result does not start one). A model answers the tool results of its turn with text, so an agent's
  // run ends after one round of calls.
  const ask = messages.findLastIndex((m) => m.role === "user" && ownText(m));
  const turnStart = ask >= 0 ? ask : messages.findLastIndex((m) => m.role === "user");
  const lastUserText = ask >= 0 ? ownText(messages[ask]) : textOf(messages[turnStart]?.content);
  const lastResult = messages.findLastIndex((m, i) => i > turnStart && m.role === "tool");
  const seed = seedOf(body, choice);
  const id = (i: number) => `call_${seed.toString(36)}${i}`;

  // A forced choice ("required", a named tool; Anthropic's any/tool arrive as these) calls a tool even after the
  // turn's results, as every provider does; only auto answers them with text.
  const forced = body.tool_choice === "required" || (typeof body.tool_choice === "object" && body.tool_choice !== null);
  if (lastResult < 0 || forced) {
    const tools = chooseTools(body, lastUserText);
    if (tools.length) {
      const hints: InstanceHints = { words: wordsOf(lastUserText), files: fileNames(lastUserText), requiredOnly: true };
      const calls = tools.map((t, i) => ({
        id: id(i),
        name: t.function.name,
        arguments: JSON.stringify(instanceFor(t.function.parameters ?? { type: "object", properties: {} }, hints, `tools[${body.tools.indexOf(t)}].function.parameters`)),
      }));
      return { pieces: [], toolCalls: calls, finishReason: "tool_calls" };
    }
  }

  const rf = body.response_format;
  let text: string;
  if (rf?.type === "json_schema" && rf.json_schema?.schema) {
    text = JSON.stringify(instanceFor(rf.json_schema.schema, { words: wordsOf(lastUserText) }, "response_format.json_schema.schema"));
  } else if (rf?.type === "json_object") {
    text = JSON.stringify({ model, answer: lastUserText.slice(0, 120) || "ok" });
  } else if (lastResult >= 0) {
    // The last batch of results (the calls of the turn's last assistant message).
    let first = lastResult;
    while (messages[first - 1]?.role === "tool") first--;
    const results = messages.slice(first, lastResult + 1).map((m) => textOf(m.content));
    text = `Based on the tool result${results.length > 1 ? "s" : ""}: ${results.join("; ").slice(0, 400)}`;
  } else {
    const echo = lastUserText.trim().replace(/\s+/g, " ").slice(0, 160);
    const extra = [FILLER[seed % FILLER.length], FILLER[(seed >>> 8) % FILLER.length]];
    text = `Simulated reply from ${model}${echo ? ` to "${echo}"` : ""}. ${extra[0]} ${extra[1]}`;
  }
  const { pieces, finish, stopSequence } = limitPieces(text, body);
  return { pieces, toolCalls: [], finishReason: finish, ...(stopSequence === undefined ? {} : { stopSequence }) };
}

/** A value for a schema the client sent; one that does not compile, or that the simulator cannot satisfy, is a 400 naming it. */
function instanceFor(schema: Record<string, any>, hints: InstanceHints, field: string): unknown {
  try {
    return validInstance(schema, hints);
  } catch (err) {
    throw new GatewayError(400, "INVALID_REQUEST", `${field}: ${(err as Error).message}`, { details: { field } });
  }
}
