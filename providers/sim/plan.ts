// What the simulated model "decides" to answer: text, tool calls or structured output — deterministic for a
// given request, so tests and demos are repeatable.
import { createHash } from "node:crypto";
import { GatewayError } from "../../core/errors.ts";
import { validInstance, type InstanceHints } from "./schema-instance.ts";
import { splitTokens } from "./tokens.ts";
import { statedOutputLimit } from "../../core/metering/output-limit.ts";

export interface PlannedToolCall { id: string; name: string; arguments: string }
export interface Plan {
  /** Content tokens (pieces) to stream, already cut by max_tokens / stop. */
  pieces: string[];
  toolCalls: PlannedToolCall[];
  finishReason: "stop" | "length" | "tool_calls";
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

function words(text: string): string[] {
  return text.match(/[\p{L}\p{N}_]+/gu) ?? [];
}

function limitPieces(text: string, body: any): { pieces: string[]; finish: "stop" | "length" } {
  const stops: string[] = body.stop == null ? [] : Array.isArray(body.stop) ? body.stop : [body.stop];
  let cut = text;
  for (const s of stops) {
    const at = s ? cut.indexOf(s) : -1;
    if (at >= 0) cut = cut.slice(0, at);
  }
  const pieces = splitTokens(cut);
  const max = statedOutputLimit(body);
  if (max !== undefined && pieces.length > max) return { pieces: pieces.slice(0, max), finish: "length" };
  return { pieces, finish: "stop" };
}

function chooseTools(body: any, lastUserText: string): any[] {
  const tools: any[] = (body.tools ?? []).filter((t: any) => t?.type === "function" && t.function?.name);
  const choice = body.tool_choice;
  if (!tools.length || choice === "none") return [];
  if (choice && typeof choice === "object") {
    const named = tools.find((t) => t.function.name === choice.function?.name);
    if (!named) throw new GatewayError(400, "INVALID_REQUEST", `tool_choice names "${choice.function?.name}", which is not in tools`, { details: { field: "tool_choice.function.name" } });
    return [named];
  }
  const userWords = new Set(words(lastUserText.toLowerCase()));
  const scored = tools.map((t) => {
    const own = words(`${t.function.name.replace(/[_-]/g, " ")} ${t.function.description ?? ""}`.toLowerCase());
    return { t, score: own.filter((w) => w.length > 2 && userWords.has(w)).length };
  });
  const hits = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
  if (choice === "required") return hits.length ? hits.slice(0, body.parallel_tool_calls === false ? 1 : 3).map((s) => s.t) : [tools[0]];
  if (!hits.length) return [];
  return body.parallel_tool_calls === false ? [hits[0]!.t] : hits.slice(0, 3).map((s) => s.t);
}

export function planChoice(body: any, model: string, choice: number): Plan {
  // System and developer messages (anywhere, e.g. Claude Code's after the user turn) instruct; they are not turns.
  const messages: any[] = (body.messages ?? []).filter((m: any) => m?.role !== "system" && m?.role !== "developer");
  const last = messages[messages.length - 1];
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const lastUserText = textOf(lastUser?.content);
  const seed = seedOf(body, choice);
  const id = (i: number) => `call_${seed.toString(36)}${i}`;

  // A model answers tool results with text; otherwise it may call tools.
  if (last?.role !== "tool") {
    const tools = chooseTools(body, lastUserText);
    if (tools.length) {
      const hints = { words: words(lastUserText) };
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
    text = JSON.stringify(instanceFor(rf.json_schema.schema, { words: words(lastUserText) }, "response_format.json_schema.schema"));
  } else if (rf?.type === "json_object") {
    text = JSON.stringify({ model, answer: lastUserText.slice(0, 120) || "ok" });
  } else if (last?.role === "tool") {
    const results = messages.slice(messages.findLastIndex((m) => m.role !== "tool") + 1).map((m) => textOf(m.content));
    text = `Based on the tool result${results.length > 1 ? "s" : ""}: ${results.join("; ").slice(0, 400)}`;
  } else {
    const echo = lastUserText.trim().replace(/\s+/g, " ").slice(0, 160);
    const extra = [FILLER[seed % FILLER.length], FILLER[(seed >>> 8) % FILLER.length]];
    text = `Simulated reply from ${model}${echo ? ` to "${echo}"` : ""}. ${extra[0]} ${extra[1]}`;
  }
  const { pieces, finish } = limitPieces(text, body);
  return { pieces, toolCalls: [], finishReason: finish };
}

/** A value for a schema the client sent; one that does not compile, or that the simulator cannot satisfy, is a 400 naming it. */
function instanceFor(schema: Record<string, any>, hints: InstanceHints, field: string): unknown {
  try {
    return validInstance(schema, hints);
  } catch (err) {
    throw new GatewayError(400, "INVALID_REQUEST", `${field}: ${(err as Error).message}`, { details: { field } });
  }
}
