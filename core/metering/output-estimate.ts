// Output tokens of an answer whose upstream reported none (issue 25: such streams were billed one token per event,
// 6 900 characters as 12 tokens): estimated from the text the gateway relayed, in the client's protocol, with
// estimateTokens (which errs high). Only the fields that carry generated text are read — chat deltas' content,
// reasoning, refusal and tool-call arguments; Messages content_block_delta text, thinking and partial_json; the
// Responses API's *.delta events; Gemini parts' text (and functionCall args) — found by a regex search, so a stream that does report usage pays one search per
// event (~0.2 µs) and no JSON parse.
import type { SseEvent } from "../sse/parse.ts";
import type { EndpointKind } from "../pipeline/context.ts";
import { estimateTokensBounded } from "./estimate-tokens.ts";

// One regex per protocol finds the keys (with JSON's optional blanks) in a single pass: a fifth of the cost of an
// indexOf per key (bench/stream.bench.ts, usage-metering's share of a relayed event).
const CHAT_KEYS = /"(?:content|reasoning_content|reasoning|refusal|arguments)"[ \t\r\n]*:[ \t\r\n]*"/g;
const MESSAGES_KEYS = /"(?:text|thinking|partial_json)"[ \t\r\n]*:[ \t\r\n]*"/g;
const RESPONSES_KEYS = /"delta"[ \t\r\n]*:[ \t\r\n]*"/g;
const GEMINI_KEYS = /"text"[ \t\r\n]*:[ \t\r\n]*"/g;
/** Keys of a JSON answer (any of the three protocols) whose string values are generated text. */
const ANSWER_TEXT = new Set(["content", "reasoning_content", "reasoning", "refusal", "arguments", "text", "thinking"]);

/** Estimated tokens of the JSON string values that `keys` (a regex ending at the value's opening quote) finds in `json`. */
function stringValuesTokens(json: string, keys: RegExp): number {
  let n = 0;
  keys.lastIndex = 0;
  for (let m = keys.exec(json); m; m = keys.exec(json)) {
    const start = keys.lastIndex;
    let end = json.indexOf('"', start);
    // Skip escaped quotes: a quote preceded by an odd number of backslashes.
    while (end !== -1) {
      let b = end - 1;
      while (b >= start && json.charCodeAt(b) === 92) b--;
      if ((end - 1 - b) % 2 === 0) break;
      end = json.indexOf('"', end + 1);
    }
    if (end === -1) break;
    // A non-empty piece of generated text is at least a token (a lone "\n" is one): the floor docs/policies.md
    // states per content event. An empty one (a chat role chunk's content: "") is none.
    if (end > start) n += Math.max(1, textTokens(json.slice(start, end)));
    keys.lastIndex = end + 1;
  }
  return n;
}

/** A JSON string's body (escapes undone when there are any) as estimated tokens. */
function textTokens(raw: string): number {
  if (raw.indexOf("\\") !== -1 && raw.length <= 64 * 1024) {
    try {
      return estimateTokensBounded(JSON.parse(`"${raw}"`) as string);
    } catch { /* not valid JSON text: estimate it as it is */ }
  }
  return estimateTokensBounded(raw);
}

/** The event's type on the Responses API: its `event:` name, else the JSON's leading `type`. */
function responsesType(ev: SseEvent): string | undefined {
  if (ev.event !== undefined) return ev.event;
  return /^\{\s*"type"\s*:\s*"([^"]+)"/.exec(ev.data)?.[1];
}

/**
 * Estimated output tokens carried by one stream event sent to the client: at least one for an event that carries
 * generated text, 0 for the protocol's framing (message_start, ping, content_block_start, response.created, …).
 */
export function eventOutputTokens(endpoint: EndpointKind, ev: SseEvent): number {
  switch (endpoint) {
    case "chat":
      return stringValuesTokens(ev.data, CHAT_KEYS);
    case "messages":
      return ev.event === "content_block_delta" ? stringValuesTokens(ev.data, MESSAGES_KEYS) : 0;
    case "responses":
      return responsesType(ev)?.endsWith(".delta") ? stringValuesTokens(ev.data, RESPONSES_KEYS) : 0;
    case "gemini":
      // candidates[].content.parts[].text (thoughts included); a functionCall's args is an object, counted as its JSON.
      return ev.data.includes('"functionCall"') ? answerOutputTokens(parsed(ev.data)) : stringValuesTokens(ev.data, GEMINI_KEYS);
    default:
      return 0;
  }
}

function parsed(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/**
 * Estimated output tokens of a JSON answer (chat completion, Messages message, Responses response, Gemini
 * GenerateContentResponse): every string under a generated-text key, and Messages tool_use `input` and Gemini
 * functionCall `args` objects as their JSON. Iterative, so no nesting depth
 * can overflow the stack.
 */
export function answerOutputTokens(body: unknown): number {
  let n = 0;
  const stack: unknown[] = [body];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === "object") stack.push(x);
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === "string") {
          if (ANSWER_TEXT.has(k)) n += estimateTokensBounded(x);
        } else if (x !== null && typeof x === "object") {
          if ((k === "input" || k === "args") && !Array.isArray(x)) n += estimateTokensBounded(JSON.stringify(x));
          else stack.push(x);
        }
      }
    }
  }
  return n;
}
