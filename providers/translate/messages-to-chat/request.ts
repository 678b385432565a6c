// Anthropic Messages request -> chat completions request, for models whose provider speaks chat (OpenAI-protocol,
// Gemini through its chat op, the simulator). Reference §3.2–3.5 read in reverse.
// A mid-conversation system message (role "system" in messages) becomes a chat system message at its place.
// Choices: server tools (tools[].type) cannot be honoured -> 400; `thinking` becomes reasoning_effort on a model that
// can think, and thinking blocks sent back are replayed to the upstream that made them (reasoning.ts); `top_k`,
// `service_tier`, a document's context and citations (and the title of a text document: a PDF's is its file name), and cache markers are dropped (reported in
// x-mg-dropped-params); unknown fields are dropped, blocks of unknown types (and container_upload) dropped and named;
// when that leaves no turn, or leaves out the client's last user turn (a prefill after it or not), the target is passed
// over (400 naming messages when none can serve).
// output_config.format (structured outputs; output_format in the beta) becomes response_format json_schema. On a chat completions upstream
// (flavor chat) more than 4 stop_sequences pass the target over, and an assistant prefill is named (prefill.ts).
// Tool ids lose the Gemini signature suffix on any other upstream (chat-to-gemini/response.ts unsignedToolId).
import { invalidRequest } from "../../../core/errors.ts";
import { Unsupported } from "../../../core/contracts/translator.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { statedOutputLimit } from "../../../core/metering/output-limit.ts";
import { thinkingAsk, withReplayedReasoning, type ThinkingScope } from "./reasoning.ts";
import { unsignedToolId } from "../chat-to-gemini/response.ts";
import { markClient, type Origin } from "../client-names.ts";
import { MESSAGES_SPELLING } from "./client-spelling.ts";
import { prefillField } from "./prefill.ts";
import { refuseThread } from "../../codecs/anthropic-messages/thread.ts";
import { chatFileName } from "../file-name.ts";

export interface Translated<T> {
  body: T;
  dropped: string[];
}

/**
 * The target and whose reasoning this upstream verifies; without them (token counting) thinking is dropped. `origin`
 * is told what each chat object was made of (only when a refusal is named as the client sent it: client-names.ts).
 */
export interface MessagesToChatOptions { target?: Target; scope?: ThinkingScope; origin?: Origin }

/** The chat body made again, telling `origin` where its objects came from. */
const retrace = (client: any, _target: unknown, opts: MessagesToChatOptions, origin: Origin) => messagesToChatRequest(client, { ...opts, origin }).body;

export function messagesToChatRequest(body: any, opts: MessagesToChatOptions = {}): Translated<Record<string, unknown>> {
  const dropped: string[] = [];
  refuseThread(body); // no chat upstream keeps message threads
  const think = thinkingAsk(body, opts.target, opts.scope?.flavor ?? "chat");
  dropped.push(...think.dropped);
  if (body.top_k !== undefined) dropped.push("top_k");
  // Anthropic's capacity tiers (auto | standard_only) are not OpenAI's (auto | default | flex | priority), and
  // Gemini and Converse have none chosen per request.
  if (body.service_tier !== undefined && body.service_tier !== null) dropped.push("service_tier");
  // Reasoning goes back only to a model that can think (one that cannot may refuse the fields).
  const replay = opts.target?.reasoning === true ? opts.scope : undefined;
  // Calls and their results alike, so they still pair. Without a scope (token counting) the ids stay as sent.
  const toolId: ToolId = opts.scope && opts.scope.flavor !== "gemini" ? unsignedToolId : (id) => id;
  const markErrors = opts.scope !== undefined && opts.scope.flavor !== "chat";
  const origin = opts.origin;
  // Bedrock Converse's half downloads a URL part, so a URL document goes on as one (chat-to-converse/url-media.ts).
  const urlDocs = opts.scope?.flavor === "converse";

  const messages: Record<string, unknown>[] = [];
  const system = systemText(body.system);
  if (system) {
    const msg = { role: "system", content: system };
    origin?.(msg, "system");
    messages.push(msg);
  }
  // The Messages API merges consecutive turns of one role; chat needs them merged too, or an assistant turn's
  // tool calls could be split from the results that answer them.
  let calls: string[] = [];
  // A mid-conversation system message between tool calls and their results waits until the results are in: chat
  // upstreams want the tool messages right after the calls.
  let held: Record<string, unknown>[] = [];
  const turns = mergedTurns(body.messages);
  // The client's question: its last user turn, whatever assistant prefill or system message follows it.
  const lastUserTurn = turns.findLast((t) => t.role === "user");
  let lastLeftOut: Turn | undefined;
  for (const turn of turns) {
    const { role, content, index } = turn;
    // A chat message is one client message, or several merged: then only the list is certain.
    const from = origin && (turn.last === index ? body.messages[index] : "messages");
    if (role === "system") {
      const text = blockText(content, "\n\n");
      if (text) {
        const msg = { role: "system", content: text };
        origin?.(msg, from);
        (calls.length ? held : messages).push(msg);
      }
    } else if (role === "assistant") {
      messages.push(...held.splice(0));
      const msg = assistantMessage(content, turn.at, replay, toolId, dropped, origin);
      if (!msg) {
        calls = [];
        continue;
      }
      origin?.(msg, from);
      calls = ((msg.tool_calls as { id: string }[] | undefined) ?? []).map((tc) => tc.id);
      messages.push(msg);
    } else {
      const out = userMessages(content, turn.at, calls, toolId, dropped, markErrors, urlDocs, origin);
      if (turn === lastUserTurn && !out.length) lastLeftOut = turn;
      if (origin) for (const m of out) if (m.role === "user") origin(m, from);
      const results = out.findLastIndex((m) => m.role === "tool") + 1;
      out.splice(results, 0, ...held.splice(0));
      messages.push(...out);
      calls = [];
    }
  }
  messages.push(...held);
  refuseNothingLeft(body.messages, messages, dropped);
  refuseLastTurnLeftOut(lastLeftOut, dropped);

  // The limit under any alias the body carries (the largest): what the budget reserved.
  const out: Record<string, unknown> = { model: body.model, messages, max_tokens: statedOutputLimit(body) };
  if (body.temperature !== undefined) out.temperature = body.temperature;
  if (body.top_p !== undefined) out.top_p = body.top_p;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length) out.stop = body.stop_sequences;
  // A chat host's stop limit is checked by its driver (openai-compatible/request.ts), named as stop_sequences.
  if (opts.scope?.flavor === "chat") {
    // A chat completions model does not continue a final assistant turn (Converse's Claude does).
    const prefill = prefillField(body.messages);
    if (prefill) dropped.push(prefill);
  }
  if (body.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // the transcoder needs usage for message_delta
  }
  if (typeof body.metadata?.user_id === "string") out.user = body.metadata.user_id;
  if (Array.isArray(body.tools) && body.tools.length) {
    out.tools = body.tools.map((t: any, i: number) => {
      if (t.type !== undefined && t.type !== "custom") throw invalidRequest(`server tool ${t.type} is not supported by this model's provider`, `tools[${i}].type`);
      const fn: Record<string, unknown> = { name: t.name, parameters: t.input_schema ?? { type: "object", properties: {} } };
      if (t.description !== undefined) fn.description = t.description;
      const tool = { type: "function", function: fn };
      origin?.(tool, t);
      return tool;
    });
    const tc = body.tool_choice;
    if (tc) {
      if (tc.type === "auto") out.tool_choice = "auto";
      else if (tc.type === "any") out.tool_choice = "required";
      else if (tc.type === "none") out.tool_choice = "none";
      else if (tc.type === "tool") out.tool_choice = { type: "function", function: { name: tc.name } };
      if (tc.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
    }
  }
  // output_format is the structured-outputs beta's spelling, which @anthropic-ai/sdk's beta parse() still sends.
  const format = body.output_config?.format ?? body.output_format;
  if (format?.type === "json_schema") {
    // Anthropic's structured outputs are always strict (constrained decoding); OpenAI's strict mode is the same promise.
    out.response_format = { type: "json_schema", json_schema: { name: "output", schema: format.schema ?? { type: "object" }, strict: true } };
  }
  // providerOptions stays: routing already used `gateway`; provider-namespaced knobs reach chat drivers that know them.
  if (body.providerOptions !== undefined) out.providerOptions = body.providerOptions;
  // Thinking off said the model's own way (DeepSeek: thinking {type: disabled}).
  if (think.fields) Object.assign(out, think.fields);
  if (think.effort !== undefined) {
    out.reasoning_effort = think.effort;
    // Gemini returns thought text only when asked (the reasoningSummary knob is its includeThoughts); Anthropic always does.
    // Not with thinking off (none): the client asked for no thinking blocks, even where 2.5 Pro thinks a little.
    const provider = opts.target?.provider;
    if (opts.scope?.flavor === "gemini" && provider && think.effort !== "none") {
      const po: any = body.providerOptions ?? {};
      if (!po[provider]?.reasoningSummary) out.providerOptions = { ...po, [provider]: { ...po[provider], reasoningSummary: "auto" } };
    }
  }
  // What a chat step refuses or leaves out is named as this client sent it.
  return { body: markClient(out, MESSAGES_SPELLING, retrace, body, opts.target, opts), dropped };
}

function systemText(system: any): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system.filter((b: any) => b.type === "text").map((b: any) => b.text).join("\n\n");
}

function blockText(content: any, joiner = "\n"): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b: any) => b.type === "text").map((b: any) => b.text).join(joiner);
}

function imagePart(source: any): Record<string, unknown> | undefined {
  if (source?.type === "base64") return { type: "image_url", image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source?.type === "url") return { type: "image_url", image_url: { url: source.url } };
  return undefined;
}

/**
 * What of a document block a chat part cannot carry, named at `at`: its `context` (Anthropic shows it to the model
 * beside the document; chat has no place for it), its `title` unless the part is a file (whose filename it is), and
 * `citations` when enabled (no chat upstream cites).
 */
function documentExtras(b: any, part: Record<string, unknown>, at: string, dropped: string[]): void {
  for (const k of part.type === "file" ? ["context"] : ["title", "context"]) if (b[k] !== undefined && b[k] !== null && b[k] !== "") dropped.push(`${at}.${k}`);
  if (b.citations?.enabled === true) dropped.push(`${at}.citations`);
}

/**
 * A base64 PDF as a file part named by the document's title (OpenAI refuses file_data without a filename), a text
 * document as text; a URL one as an image_url part where the next half downloads it (`urlDocs`: a PDF URL becomes a
 * document there); other sources (url, file ids) chat cannot carry.
 */
function documentPart(b: any, urlDocs: boolean): Record<string, unknown> | undefined {
  const source = b?.source;
  if (source?.type === "base64" && source.media_type === "application/pdf") {
    return { type: "file", file: { file_data: `data:application/pdf;base64,${source.data}`, filename: chatFileName("application/pdf", b.title) } };
  }
  if (source?.type === "text") return { type: "text", text: source.data };
  if (urlDocs && source?.type === "url" && typeof source.url === "string") return { type: "image_url", image_url: { url: source.url } };
  return undefined;
}

type ToolId = (id: unknown) => unknown;

/** `at[j]` is the client's own path of `content[j]` (`messages[3].content[0]`), merged or not. */
interface Turn { role: string; content: any[] | string; index: number; last: number; at: string[] }

/**
 * Consecutive same-role turns joined into one (string content becomes a text block); index = the first one's, last the
 * last one's. Each block keeps the path it had in the client's body, so what is left out or refused is named where the
 * client sent it, not where it sits in the merged turn.
 */
function mergedTurns(messages: any[]): Turn[] {
  const out: Turn[] = [];
  const pathsOf = (c: any, i: number): string[] =>
    typeof c === "string" ? (c ? [`messages[${i}].content`] : []) : Array.isArray(c) ? c.map((_, j) => `messages[${i}].content[${j}]`) : [];
  const asBlocks = (c: any) => (typeof c === "string" ? (c ? [{ type: "text", text: c }] : []) : c);
  messages.forEach((m, index) => {
    const last = out[out.length - 1];
    if (!last || last.role !== m.role) {
      out.push({ role: m.role, content: m.content, index, last: index, at: pathsOf(m.content, index) });
      return;
    }
    last.last = index;
    last.content = [...asBlocks(last.content), ...asBlocks(m.content)];
    last.at = [...last.at, ...pathsOf(m.content, index)];
  });
  return out;
}

/**
 * Blocks a translation leaves out without naming them: thinking (replayed through reasoning.ts where it can be) and
 * the server-tool blocks of an earlier Claude turn (the search or run they record happened; chat has no such block).
 */
const SILENTLY_LEFT_OUT = new Set([
  "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
  "code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
  "tool_search_tool_result", "mcp_tool_use", "mcp_tool_result",
]);

/**
 * A user turn: every tool_result becomes its own tool message first, in the order of the calls they answer (`calls`,
 * the previous assistant turn's tool_use ids; OpenAI and Gemini want the answers right after the calls, in order),
 * then what the results hold besides text (images, documents) and the remaining content as one user message.
 */
function userMessages(content: any, at: string[], calls: string[], toolId: ToolId, dropped: string[], markErrors: boolean, urlDocs: boolean, origin?: Origin): Record<string, unknown>[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const out: Record<string, unknown>[] = [];
  const parts: Record<string, unknown>[] = [];
  const resultParts: Record<string, unknown>[] = [];
  content.forEach((b: any, j: number) => {
    switch (b.type) {
      case "tool_result": {
        let text = blockText(b.content);
        if (Array.isArray(b.content)) {
          b.content.forEach((c: any, k: number) => {
            if (c?.type === "text") return;
            // A tool message holds only text: what else the result holds follows as user content (Claude Code's
            // Read returns a PDF as a document); what chat cannot carry at all is named.
            const p = c?.type === "image" ? imagePart(c.source) : c?.type === "document" ? documentPart(c, urlDocs) : undefined;
            if (p) {
              origin?.(p, c);
              resultParts.push(p);
              if (c.type === "document") documentExtras(c, p, `${at[j]}.content[${k}]`, dropped);
            } else dropped.push(`${at[j]}.content[${k}]`);
          });
        }
        if (b.is_error === true) text = text ? `Error: ${text}` : "Error";
        const msg: Record<string, unknown> = { role: "tool", tool_call_id: toolId(b.tool_use_id), content: text };
        // Chat has no error flag: the inner half of a chain (chat-to-converse: status "error") reads this one; an
        // OpenAI-protocol upstream would refuse the unknown field, and has the "Error: " text.
        if (markErrors && b.is_error === true) msg.is_error = true;
        origin?.(msg, b);
        out.push(msg);
        break;
      }
      case "text": {
        const p = { type: "text", text: b.text };
        origin?.(p, b);
        parts.push(p);
        break;
      }
      case "image": {
        const p = imagePart(b.source);
        if (!p) throw invalidRequest("this image source type is not supported by this model's provider", `${at[j]}.source.type`);
        origin?.(p, b);
        parts.push(p);
        break;
      }
      case "document": {
        const p = documentPart(b, urlDocs);
        if (!p) throw invalidRequest("this document source is not supported by this model's provider", `${at[j]}.source`);
        origin?.(p, b);
        parts.push(p);
        documentExtras(b, p, at[j], dropped);
        break;
      }
      default:
        // Thinking and server-tool blocks have no chat equivalent and go unnamed; any other block (one the gateway
        // does not know, a container_upload) is the client's content left out, so it is named.
        if (!SILENTLY_LEFT_OUT.has(b.type)) dropped.push(at[j]);
        break;
    }
  });
  const rank = (m: Record<string, unknown>) => {
    const at = calls.indexOf(m.tool_call_id as string);
    return at === -1 ? calls.length : at;
  };
  out.sort((a, b) => rank(a) - rank(b)); // stable: results for unknown ids keep their order, last
  const userParts = resultParts.concat(parts);
  if (userParts.length) {
    const onlyText = userParts.every((p) => p.type === "text");
    out.push({ role: "user", content: onlyText ? userParts.map((p) => p.text).join("\n") : userParts });
  }
  return out;
}

/**
 * An assistant turn: its text, its tool calls, and the reasoning its thinking blocks give back to this upstream; a
 * block of a type the gateway does not know is named in `dropped`. A turn made only of such blocks is no message at
 * all (an empty assistant message is one Gemini and Converse refuse).
 */
function assistantMessage(content: any, at: string[], replay: ThinkingScope | undefined, toolId: ToolId, dropped: string[], origin?: Origin): Record<string, unknown> | undefined {
  if (typeof content === "string") return { role: "assistant", content };
  let text = "";
  let named = 0;
  const toolCalls: Record<string, unknown>[] = [];
  content.forEach((b: any, j: number) => {
    if (b.type === "text") text += b.text;
    else if (b.type === "tool_use") {
      const call = { id: toolId(b.id), type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } };
      origin?.(call, b);
      toolCalls.push(call);
    } else if (!SILENTLY_LEFT_OUT.has(b.type)) {
      dropped.push(at[j]);
      named++;
    }
  });
  if (named > 0 && named === content.length) return undefined;
  const msg: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (toolCalls.length) msg.tool_calls = toolCalls;
  return replay ? withReplayedReasoning(msg, content, replay) : msg;
}

/**
 * The client's turns all left out (made only of blocks chat has no place for): an upstream would answer an empty
 * conversation with its own 400, which could end a fallback chain. This target is passed over instead (a Claude one
 * takes the blocks as sent); with none, the client gets the gateway's 400 naming messages, and nothing is sent.
 */
function refuseNothingLeft(client: any[], messages: Record<string, unknown>[], dropped: string[]): void {
  if (messages.some((m) => m.role !== "system") || !client.some((m) => m?.role !== "system")) return;
  const left = dropped.filter((d) => d.startsWith("messages["));
  const which = left.length ? ` (${left.join(", ")})` : "";
  throw new Unsupported(invalidRequest(`nothing is left to send to this model: the content blocks its provider cannot take were left out${which}, and no message remains; send them to a Claude model, or add text`, "messages"));
}

/**
 * The client's last user turn left out (made only of blocks chat has no place for) while earlier turns remain: the
 * conversation sent would lose the client's question, ending on an earlier assistant turn the model reads as a prefill
 * to continue (or it answers the user turn before), or with the client's own prefill now continuing that earlier turn,
 * a 200 to a question the client did not ask. As a blank last turn is (blank-text.ts), it is refused: this target is
 * passed over, and with none the client gets the gateway's 400 naming messages. A trailing assistant turn the client
 * sent after a user turn that is kept is its own prefill, and goes as before.
 */
function refuseLastTurnLeftOut(turn: Turn | undefined, dropped: string[]): void {
  if (!turn) return;
  const inTurn = (d: string) => {
    const i = Number(/^messages\[(\d+)\]/.exec(d)?.[1]);
    return i >= turn.index && i <= turn.last;
  };
  const left = dropped.filter(inTurn);
  const which = left.length ? ` (${left.join(", ")})` : "";
  throw new Unsupported(invalidRequest(`the last user message's content blocks were left out${which}: this model's provider cannot take them, and without them the model would be sent the conversation without that message, continuing or answering an earlier turn instead; send them to a Claude model, or add text`, "messages"));
}
