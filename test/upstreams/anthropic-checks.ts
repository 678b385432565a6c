// What the real Messages API checks in a conversation, for the fake Anthropic upstream: stop sequences (none blank), a
// tool's name and input_schema (an object schema), blank text blocks, tool ids' characters, tool_use/tool_result pairing,
// thinking signatures (a signature covers its block's text, so a replayed block must come back unchanged), and, with
// thinking on, a tool loop's assistant turn must start with its thinking block.
// Messages follow the real API's.
import { createHash } from "node:crypto";

/** Thinking on: manual (a budget) or adaptive (the model decides how much; the fake always thinks some). */
export const thinkingOn = (body: any): boolean => body?.thinking?.type === "enabled" || body?.thinking?.type === "adaptive";

/** The fake's signature for a thinking text (opaque to clients, like Anthropic's). */
export const signThinking = (text: string) => `EqQB${createHash("sha256").update(text).digest("base64")}`;

/** The fake's redacted_thinking data: what the real API returns when the prompt holds the documented trigger. */
export const REDACTED_TRIGGER = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253";
export const REDACTED_DATA = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

const blocks = (m: any): any[] => (Array.isArray(m?.content) ? m.content : []);

/** Models that take mid-conversation system messages (the real API: Claude Opus 4.8 only). */
export const MID_CONVERSATION_SYSTEM = /opus-4-8/;

/**
 * Mid-conversation `role: "system"` messages, as the real API judges them: refused on other models; on Opus 4.8 not
 * first, right after a user turn, last or followed by an assistant turn, never two in a row, text blocks only.
 */
function systemMessageError(body: any, messages: any[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]?.role !== "system") continue;
    if (!MID_CONVERSATION_SYSTEM.test(String(body?.model))) return "role 'system' is not supported on this model";
    if (i === 0) return `messages.0: use the top-level 'system' parameter for the initial system prompt`;
    if (messages[i - 1]?.role !== "user") return `messages.${i}: role 'system' must follow a 'user' message`;
    const next = messages[i + 1];
    if (next?.role === "system") return `messages.${i + 1}: consecutive 'system' messages are not allowed`;
    if (next && next.role !== "assistant") return `messages.${i}: role 'system' must precede an 'assistant' message or end the array`;
    const bad = blocks(messages[i]).findIndex((b) => b?.type !== "text");
    if (bad !== -1) return `messages.${i}.content.${bad}.type: Input should be 'text'`;
  }
  return undefined;
}

/** Tool ids take only [a-zA-Z0-9_-] (protocols.md §3.4): another host's `functions.get_weather:0` is refused. */
export function toolIdError(messages: any[]): string | undefined {
  const ok = (id: unknown) => typeof id === "string" && /^[a-zA-Z0-9_-]+$/.test(id);
  for (let i = 0; i < messages.length; i++) {
    for (const [j, b] of blocks(messages[i]).entries()) {
      if (b?.type === "tool_use" && !ok(b.id)) return `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      if (b?.type === "tool_result" && !ok(b.tool_use_id)) return `messages.${i}.content.${j}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
    }
  }
  return undefined;
}

/**
 * A custom tool's name and a tool_choice naming one, as the real API refuses them: only [a-zA-Z0-9_-], at most 128
 * (a Gemini client's `github.search_issues` is refused). Server tools (a `type` other than custom) are named by Anthropic.
 */
export function toolNameError(body: any): string | undefined {
  const ok = (name: unknown) => typeof name === "string" && /^[a-zA-Z0-9_-]{1,128}$/.test(name);
  for (const [i, t] of (Array.isArray(body?.tools) ? body.tools : []).entries()) {
    if ((t?.type === undefined || t.type === "custom") && !ok(t?.name)) return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
  }
  if (body?.tool_choice?.type === "tool" && !ok(body.tool_choice.name)) return "tool_choice.tool.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'";
  return undefined;
}

/**
 * A custom tool's input_schema, as the real API refuses it: missing, without a `type`, of a type other than "object"
 * (a function's input is an object), or with oneOf, allOf or anyOf at its root (what a zod union writes). Server
 * tools (a `type` other than custom) have none.
 */
export function toolSchemaError(body: any): string | undefined {
  for (const [i, t] of (Array.isArray(body?.tools) ? body.tools : []).entries()) {
    if (t?.type !== undefined && t.type !== "custom") continue;
    const schema = t?.input_schema;
    if (!schema || typeof schema !== "object" || Array.isArray(schema)) return `tools.${i}.custom.input_schema: Field required`;
    if (schema.type === undefined) return `tools.${i}.custom.input_schema.type: Field required`;
    if (schema.type !== "object") return `tools.${i}.custom.input_schema.type: Input should be 'object'`;
    if (["oneOf", "allOf", "anyOf"].some((k) => k in schema)) return `tools.${i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`;
  }
  return undefined;
}

/**
 * Blank text, as the real API refuses it (protocols.md §2.2): a text block in `system`, in a turn or in a
 * tool_result's content that is empty or whitespace only, named by its top-level field; and an error tool_result
 * with no content. A tool_result with no content at all is accepted (content is optional).
 */
export function blankTextError(body: any): string | undefined {
  const blank = (field: string, b: any) => (b?.type === "text" && typeof b.text === "string" && b.text.trim() === ""
    ? `${field}: text content blocks must ${b.text === "" ? "be non-empty" : "contain non-whitespace text"}`
    : undefined);
  for (const b of Array.isArray(body?.system) ? body.system : []) {
    const e = blank("system", b);
    if (e) return e;
  }
  for (const [i, m] of (Array.isArray(body?.messages) ? body.messages : []).entries()) {
    for (const [j, b] of blocks(m).entries()) {
      const e = blank("messages", b);
      if (e) return e;
      if (b?.type !== "tool_result") continue;
      const empty = b.content === undefined || b.content === "" || (Array.isArray(b.content) && !b.content.length);
      if (b.is_error === true && empty) return `messages.${i}.content.${j}.tool_result: content cannot be empty if \`is_error\` is true`;
      for (const c of Array.isArray(b.content) ? b.content : []) {
        const e = blank("messages", c);
        if (e) return e;
      }
    }
  }
  return undefined;
}

/** A stop sequence that is empty or whitespace only, as the real API refuses it (the whole request). */
export function stopSequencesError(stops: unknown): string | undefined {
  const blank = (Array.isArray(stops) ? stops : []).some((s) => typeof s === "string" && s.trim() === "");
  return blank ? "stop_sequences: each stop sequence must contain non-whitespace" : undefined;
}

/** The 400 message the real API would give this conversation, or undefined when it is valid. */
export function conversationError(body: any): string | undefined {
  const stops = stopSequencesError(body?.stop_sequences);
  if (stops) return stops;
  const names = toolNameError(body);
  if (names) return names;
  const schema = toolSchemaError(body);
  if (schema) return schema;
  const blankText = blankTextError(body);
  if (blankText) return blankText;
  const system = systemMessageError(body, Array.isArray(body?.messages) ? body.messages : []);
  if (system) return system;
  const ids = toolIdError(Array.isArray(body?.messages) ? body.messages : []);
  if (ids) return ids;
  // System messages instruct; the turn checks below are about user and assistant turns.
  const messages = mergeTurns((Array.isArray(body?.messages) ? body.messages : []).filter((m: any) => m?.role !== "system"));
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "assistant") {
      for (const [j, b] of blocks(m).entries()) {
        if (b.type === "thinking" && b.signature !== signThinking(b.thinking ?? "")) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
        if (b.type === "redacted_thinking" && b.data !== REDACTED_DATA) return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
      }
      const uses = blocks(m).filter((b) => b.type === "tool_use").map((b) => b.id);
      const next = messages[i + 1];
      if (uses.length && next) {
        const answered = new Set(blocks(next).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id));
        const missing = uses.filter((id) => !answered.has(id));
        if (missing.length) return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    } else {
      const prev = messages[i - 1];
      const uses = new Set(prev?.role === "assistant" ? blocks(prev).filter((b) => b.type === "tool_use").map((b) => b.id) : []);
      const stray = blocks(m).filter((b) => b.type === "tool_result" && !uses.has(b.tool_use_id)).map((b) => b.tool_use_id);
      if (stray.length) return `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  // With thinking on, the assistant turn a tool loop answers must start with its (signed) thinking.
  const last = messages[messages.length - 1];
  if (thinkingOn(body) && blocks(last).some((b) => b.type === "tool_result")) {
    const i = messages.length - 2;
    const first = blocks(messages[i])[0];
    if (first && first.type !== "thinking" && first.type !== "redacted_thinking") {
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
    }
  }
  return undefined;
}

/** The API merges consecutive turns of one role before anything else. */
function mergeTurns(messages: any[]): any[] {
  const out: any[] = [];
  for (const m of messages) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : blocks(m);
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content.push(...content);
    else out.push({ role: m.role, content: [...content] });
  }
  return out;
}
