// Chat completions request -> Anthropic Messages request (reference §3.1–3.5, §3.8).
// Choices: n>1, logprobs, audio input/output and file ids cannot be honoured by a messages upstream and get a 400
// naming the field; seed, logit_bias and the penalties are dropped and reported. A JSON response_format becomes one
// tool (JSON_TOOL) whose input is the answer, forced alone or, beside the client's tools, one of the tools the model
// must call (left out when tool_choice "required" asks for a call of the client's); the response translators turn its
// input back into message content.
import { invalidRequest } from "../../../core/errors.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { DEFAULT_MESSAGES_MAX_TOKENS, outputAsk, statedOutputLimit } from "../../../core/metering/output-limit.ts";
import { chatThinkingTokens, thinkingKnob } from "../../../core/metering/thinking.ts";
import { replayedThinking } from "./reasoning.ts";
import { missingThinking } from "./replay.ts";
import { anthropicWebSearch, WEB_SEARCH_FIELD } from "../web-search.ts";
import { blankLastTurn, EMPTY_RESULT, isBlank } from "../blank-text.ts";
import { plainChatTools } from "../chat-tool-forms.ts";
import { claudeStopSequences } from "../claude-stop-sequences.ts";
import { wantsFunctionCall } from "../chat-tool-forms-answer.ts";
import { safeToolId } from "../foreign-tool-id.ts";
import { jsonOutputSchema, objectToolSchema, parametersField } from "../tool-input-schema.ts";

export interface Translated<T> {
  body: T;
  /** Known request fields the target ignores (reported in x-mg-dropped-params). */
  dropped: string[];
  /** Set when response_format asked for JSON: the tool whose input is the answer (never a tool call to the client). */
  jsonTool?: string;
}

export const JSON_TOOL = "json_output";

/** Whether JSON_TOOL goes beside the client's tools. Not with tool_choice "required" (Gemini ANY, Responses
 * "required"), which forbids an answer without a call of the client's: the JSON answer comes on a later turn whose
 * tool_choice allows one (the OpenAI Agents SDK resets it after a tool call). */
export const jsonToolBesideTools = (toolChoice: unknown): boolean => toolChoice !== "required";

// prompt_cache_key / _retention: Anthropic caches by cache_control markers, it has no routing key or retention knob.
// service_tier: Anthropic's (auto | standard_only) is not OpenAI's (auto | default | flex | priority), nor mapped.
const DROPPED = ["seed", "logit_bias", "presence_penalty", "frequency_penalty", "top_logprobs", "prediction", "verbosity", "prompt_cache_key", "prompt_cache_retention", "service_tier"];
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
const DATA_URL = /^data:([^;,]+);base64,(.+)$/s;

export function chatToMessagesRequest(sent: any, target: Target): Translated<Record<string, unknown>> {
  const dropped: string[] = [];
  const body = plainChatTools(sent, dropped); // legacy functions, allowed_tools, custom tools (chat-tool-forms.ts)
  if (typeof body.n === "number" && body.n > 1) throw invalidRequest("n > 1 is not supported by this model's provider", "n");
  if (body.logprobs === true) throw invalidRequest("logprobs are not supported by this model's provider", "logprobs");
  if (Array.isArray(body.modalities) && body.modalities.includes("audio")) throw invalidRequest("audio output is not supported by this model's provider", "modalities");
  if (body.audio) throw invalidRequest("audio output is not supported by this model's provider", "audio");
  const rf = body.response_format;
  const jsonMode = rf?.type === "json_object" || rf?.type === "json_schema";
  // JSON beside the client's tools: they are sent with JSON_TOOL, so none of theirs may take its name.
  const besideTools = jsonMode && Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== "none";
  if (besideTools && body.tools.some((t: any) => t.function?.name === JSON_TOOL)) {
    throw invalidRequest(`a tool named ${JSON_TOOL} cannot go beside response_format on this model's provider: the JSON answer comes through a tool of that name`, "tools");
  }
  // The forced tool's input_schema, as a function's parameters are sent (tool-input-schema.ts): a root $ref read as
  // its object, no type or ["object", "null"] as an object, a root anyOf/oneOf/allOf of objects merged into one.
  const schema = rf?.type === "json_schema" ? jsonOutputSchema(rf.json_schema?.schema ?? { type: "object" }, "response_format.json_schema.schema") : { type: "object" };
  if (typeof body.temperature === "number" && body.temperature > 1) {
    throw invalidRequest("temperature must be between 0 and 1 for this model's provider", "temperature");
  }
  for (const k of DROPPED) if (body[k] !== undefined && body[k] !== null) dropped.push(k);

  const out: Record<string, unknown> = { model: target.upstreamModel };
  const { system, messages } = convertMessages(body.messages, dropped);
  // max_tokens is required: the client's limit (any alias), with any thinking budget below it; without one the
  // model's maximum, raised above a thinking budget only when thinking is sent (see below).
  const ask = outputAsk(body, "chat", "messages", target);
  out.max_tokens = ask.limit;
  if (system.length) out.system = system;
  out.messages = messages;
  if (body.temperature !== undefined && body.temperature !== null) out.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) out.top_p = body.top_p;
  const stops = claudeStopSequences(body.stop, dropped); // a blank one left out (claude-stop-sequences.ts)
  if (stops) out.stop_sequences = stops;
  if (body.stream === true) out.stream = true;
  // The end user's id: `user`, else safety_identifier (its replacement, reference §3.1); one id fits, so beside `user` it is named.
  if (typeof body.user === "string") out.metadata = { user_id: body.user };
  else if (typeof body.safety_identifier === "string") out.metadata = { user_id: body.safety_identifier };
  if (typeof body.user === "string" && body.safety_identifier !== undefined && body.safety_identifier !== null) dropped.push("safety_identifier");

  // tool_choice "none" keeps the tools (reference §3.4): a history holding tool_use/tool_result blocks is refused by
  // Anthropic without them, and "none" after a tool loop is how clients ask for the final answer.
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.length) {
    out.tools = tools.map((t: any, k: number) => {
      // Anthropic refuses an input_schema that is not an object schema (chat's `{}` included): tool-input-schema.ts.
      const tool: Record<string, unknown> = { name: t.function.name, input_schema: objectToolSchema(t.function.parameters, parametersField(sent, t, k)) };
      if (t.function.description !== undefined) tool.description = t.function.description;
      if (t.cache_control) tool.cache_control = t.cache_control;
      return tool;
    });
    const choice = toolChoice(body.tool_choice);
    // disable_parallel_tool_use is refused on {type: "none"} (allowed on auto/any/tool only). A legacy functions
    // request takes one call (its answer is a single function_call): more would be generated and billed for nothing.
    const oneCall = body.parallel_tool_calls === false || wantsFunctionCall(sent);
    if (oneCall && choice?.type !== "none") out.tool_choice = { ...(choice ?? { type: "auto" }), disable_parallel_tool_use: true };
    else if (choice) out.tool_choice = choice;
  }

  // Web search (web_search_options): Anthropic's server tool, unless tools are off or a function already has its name.
  const search = body.tool_choice === "none" || jsonMode ? undefined : anthropicWebSearch(body, dropped);
  if (search) {
    const taken = ((out.tools ?? []) as { name: string }[]).some((t) => t.name === search.name);
    if (taken) dropped.push(WEB_SEARCH_FIELD);
    else out.tools = [...((out.tools ?? []) as unknown[]), search];
  } else if (body.web_search_options && (body.tool_choice === "none" || jsonMode)) dropped.push(WEB_SEARCH_FIELD);

  if (jsonMode) {
    // The forced tool is not constrained decoding: a strict schema is followed as closely as the model does, not enforced.
    if (rf.json_schema?.strict === true) dropped.push("response_format.json_schema.strict");
    const description = rf.json_schema?.description ?? "Give the final answer as this tool's input, matching its schema.";
    const jsonTool = { name: JSON_TOOL, description, input_schema: schema };
    if (besideTools) {
      // Last, so the client's tools (and a cache marker on them) keep their prefix. "any" makes the model call one of
      // the client's tools or answer through JSON_TOOL, never in prose; a client's forced function keeps its force,
      // and disable_parallel_tool_use stays as parallel_tool_calls set it. With "required", only the client's tools.
      if (jsonToolBesideTools(body.tool_choice)) out.tools = [...(out.tools as unknown[]), jsonTool];
      const choice = out.tool_choice as Record<string, unknown> | undefined;
      if (choice?.type !== "tool") out.tool_choice = { ...choice, type: "any" };
    } else {
      // The forced tool replaces the client's (tool_choice "none" lets them come): a cache marker on one is lost, named.
      if (tools.some((t: any) => t.cache_control) && !dropped.includes("cache_control")) dropped.push("cache_control");
      out.tools = [jsonTool];
      out.tool_choice = { type: "tool", name: JSON_TOOL };
    }
  }

  // Thinking asked for is turned off, its knob named, when it cannot be honoured with the rest of the request:
  // - a client limit too small for Anthropic's minimum budget (outputAsk sent none: the limit holds the reasoning);
  // - a forced tool or JSON mode (alone or beside tools, both forced): Anthropic refuses forced tool use with thinking,
  //   and the force is what the client relies on (responses.parse, a tool it must get), so it wins over the reasoning;
  // - a tool loop whose turn came back without its thinking (see replay.ts).
  // The limit is then the client's own (or the model's): no budget is added to it.
  const tc = out.tool_choice as { type: string } | undefined;
  const forced = tc?.type === "any" || tc?.type === "tool";
  const askedThinking = chatThinkingTokens(body, target) !== undefined;
  if (askedThinking && (ask.thinking === undefined || forced || missingThinking(out.messages as { role: string; content: unknown }[]))) {
    dropped.push(thinkingKnob(body, target));
    out.max_tokens = statedOutputLimit(body) ?? target.maxTokens ?? DEFAULT_MESSAGES_MAX_TOKENS;
  } else if (ask.thinking !== undefined) {
    out.thinking = { type: "enabled", budget_tokens: ask.thinking };
    // With thinking on, temperature and top_p are not sent (reference §3.8: the newest models take temperature 1 only,
    // and refuse temperature beside top_p): dropped and named, whatever their value.
    if (out.temperature !== undefined) dropSampling(out, "temperature", dropped);
    if (out.top_p !== undefined) dropSampling(out, "top_p", dropped);
  }
  // Claude Sonnet 4.5, Haiku 4.5 and newer refuse temperature beside top_p ("cannot both be specified"): temperature is
  // kept (vercel/ai's choice, reference §3.1) and top_p named. SDK defaults sent together (Gemini CLI's) meet this too.
  if (out.temperature !== undefined && out.top_p !== undefined) dropSampling(out, "top_p", dropped);
  return jsonMode ? { body: out, dropped, jsonTool: JSON_TOOL } : { body: out, dropped };
}

function dropSampling(out: Record<string, unknown>, field: "temperature" | "top_p", dropped: string[]): void {
  delete out[field];
  dropped.push(field);
}

function toolChoice(tc: any): Record<string, unknown> | undefined {
  if (tc === undefined || tc === null) return undefined;
  if (tc === "auto") return { type: "auto" };
  if (tc === "required") return { type: "any" };
  if (tc === "none") return { type: "none" };
  if (typeof tc === "object" && tc.function?.name) return { type: "tool", name: tc.function.name };
  return undefined;
}

interface Block { type: string; [k: string]: unknown }

/** System/developer messages are hoisted; consecutive tool messages (and a following user turn) become one user turn. */
function convertMessages(input: any[], dropped: string[]): { system: Block[]; messages: { role: string; content: Block[] | string }[] } {
  const system: Block[] = [];
  const messages: { role: string; content: Block[] | string }[] = [];
  let pendingResults: Block[] | null = null;
  const flushResults = () => {
    if (pendingResults) messages.push({ role: "user", content: pendingResults });
    pendingResults = null;
  };
  let blankUser: number | undefined; // a user message left with no content, while it is the client's last turn
  input.forEach((m, i) => {
    switch (m.role) {
      case "system":
      case "developer":
        const { blocks, stray } = textBlocks(m.content, dropped);
        dropStray(stray, dropped);
        system.push(...marked(blocks, m.cache_control, dropped));
        return;
      case "tool": {
        blankUser = undefined;
        const block: Block = { type: "tool_result", tool_use_id: safeToolId(m.tool_call_id) };
        const parts = typeof m.content === "string" ? undefined : textBlocks(m.content, dropped);
        const content = parts ? parts.blocks : isBlank(m.content) ? [] : m.content;
        // A blank result still answers its call (tool_result must follow tool_use): with no content, which Anthropic
        // takes, except on an error result, which must hold some.
        if (content.length) block.content = content;
        else if (m.is_error === true) block.content = EMPTY_RESULT;
        // A failed result a translator marked (a Gemini functionResponse with only an error: gemini-to-chat/request.ts).
        if (m.is_error === true) block.is_error = true;
        // A marker on a blank part with nothing kept before it: the result block itself ends that prefix.
        const marker = m.cache_control ?? (content.length ? undefined : parts?.stray);
        if (parts?.stray && !marker) dropStray(parts.stray, dropped);
        if (marker) block.cache_control = marker;
        (pendingResults ??= []).push(block);
        return;
      }
      case "user": {
        const content = userContent(m.content, i, m.cache_control, dropped);
        blankUser = !content.length && !pendingResults ? i : undefined;
        if (!content.length && !pendingResults) return; // blank text is refused upstream; nothing else was in the turn
        if (pendingResults) {
          const merged: Block[] = pendingResults;
          pendingResults = null;
          messages.push({ role: "user", content: merged.concat(typeof content === "string" ? [{ type: "text", text: content }] : content) });
        } else {
          messages.push({ role: "user", content });
        }
        return;
      }
      case "assistant": {
        blankUser = undefined;
        flushResults();
        const blocks = marked(assistantBlocks(m), m.cache_control, dropped);
        if (blocks.length) messages.push({ role: "assistant", content: blocks });
        return;
      }
    }
  });
  flushResults();
  if (blankUser !== undefined && messages.at(-1)?.role !== "user") throw blankLastTurn(blankUser);
  trimPrefill(messages);
  return { system, messages };
}

/** A final assistant turn is a prefill, which Anthropic refuses ending in whitespace (reference §2.2): trimmed (its
 * text is never blank: assistantBlocks leaves blank text out). */
function trimPrefill(messages: { role: string; content: Block[] | string }[]): void {
  const last = messages.at(-1);
  const block = last?.role === "assistant" && Array.isArray(last.content) ? last.content.at(-1) : undefined;
  if (block?.type === "text") block.text = (block.text as string).trimEnd();
}

const UNMARKABLE = new Set(["thinking", "redacted_thinking"]);

/**
 * A message-level cache_control (LiteLLM's and OpenRouter's shorthand) marks the end of that message: it goes on the
 * message's last block that can carry one (a string's single text block), unless that block has a marker of its own.
 * A message with no such block (only thinking, or blank) leaves it out, named in x-mg-dropped-params.
 */
function marked(blocks: Block[], marker: unknown, dropped: string[]): Block[] {
  if (!marker) return blocks;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if (UNMARKABLE.has(b.type)) continue;
    if (!b.cache_control) blocks[i] = { ...b, cache_control: marker };
    return blocks;
  }
  if (!dropped.includes("cache_control")) dropped.push("cache_control");
  return blocks;
}

/**
 * A system message's or a tool result's text blocks, blank ones left out (Anthropic refuses them, §2.2). A blank
 * part's cache marker moves to the block kept before it (the same prefix); with none before it, it is `stray`.
 */
function textBlocks(content: any, dropped: string[]): { blocks: Block[]; stray?: unknown } {
  if (typeof content === "string") return { blocks: isBlank(content) ? [] : [{ type: "text", text: content }] };
  const blocks: Block[] = [];
  let stray: unknown;
  for (const p of content ?? []) {
    if (p.type !== "text") continue;
    if (!isBlank(p.text)) blocks.push(p.cache_control ? { type: "text", text: p.text, cache_control: p.cache_control } : { type: "text", text: p.text });
    else if (p.cache_control && blocks.length) marked(blocks, p.cache_control, dropped);
    else if (p.cache_control) stray = p.cache_control;
  }
  return { blocks, stray };
}

/** A cache marker on a blank part left out with nothing before it in its message to carry it: named as dropped. */
function dropStray(stray: unknown, dropped: string[]): void {
  if (stray && !dropped.includes("cache_control")) dropped.push("cache_control");
}

function userContent(content: any, i: number, marker: unknown, dropped: string[]): Block[] | string {
  if (typeof content === "string") {
    if (isBlank(content)) return marked([], marker, dropped);
    return marker ? [{ type: "text", text: content, cache_control: marker }] : content;
  }
  const out: Block[] = [];
  content.forEach((p: any, j: number) => {
    const field = `messages[${i}].content[${j}]`;
    let block: Block | undefined;
    if (p.type === "text") {
      // Anthropic rejects empty and whitespace-only text blocks; a marker on one moves to the block before it.
      if (isBlank(p.text)) return void (p.cache_control && (out.length ? marked(out, p.cache_control, dropped) : dropStray(p.cache_control, dropped)));
      block = { type: "text", text: p.text };
    }
    else if (p.type === "image_url") block = imageBlock(p.image_url.url, `${field}.image_url.url`);
    else if (p.type === "file") {
      const m = typeof p.file?.file_data === "string" ? DATA_URL.exec(p.file.file_data) : null;
      if (!m || m[1] !== "application/pdf") throw invalidRequest("only PDF file_data is supported for this model's provider", `${field}.file`);
      block = { type: "document", source: { type: "base64", media_type: "application/pdf", data: m[2] } };
    } else if (p.type === "input_audio") throw invalidRequest("audio input is not supported by this model's provider", field);
    if (block) {
      if (p.cache_control) block.cache_control = p.cache_control;
      out.push(block);
    }
  });
  return marked(out, marker, dropped);
}

function imageBlock(url: string, field: string): Block {
  const m = DATA_URL.exec(url);
  if (m) {
    const mediaType = m[1]!;
    if (mediaType === "application/pdf") return { type: "document", source: { type: "base64", media_type: mediaType, data: m[2] } };
    if (!IMAGE_TYPES.has(mediaType)) throw invalidRequest(`image type ${mediaType} is not supported (jpeg, png, gif, webp)`, field);
    return { type: "image", source: { type: "base64", media_type: mediaType, data: m[2] } };
  }
  if (/^https:\/\//i.test(url)) {
    return /\.pdf($|\?)/i.test(url) ? { type: "document", source: { type: "url", url } } : { type: "image", source: { type: "url", url } };
  }
  // Anthropic fetches the URL itself and refuses plain http ("Only HTTPS URLs are supported"): say so before the call.
  if (/^http:\/\//i.test(url)) throw invalidRequest(`${field}: Anthropic fetches only https image URLs; send an https URL or a base64 data URL`, field, { reason: "not_https" });
  throw invalidRequest("image_url must be an https URL or a base64 data URL", field);
}

/** thinking blocks (replayed with their signatures), then text, then tool_use (reference §3.2). */
function assistantBlocks(m: any): Block[] {
  // reasoning_details (OpenRouter) or thinking_blocks (LiteLLM); unsigned reasoning would be rejected and is left out.
  const out: Block[] = replayedThinking(m).map((b) => ({ ...b }));
  if (typeof m.content === "string") {
    if (!isBlank(m.content)) out.push({ type: "text", text: m.content });
  } else if (Array.isArray(m.content)) {
    for (const p of m.content) {
      if (p.type === "text" && !isBlank(p.text)) out.push(p.cache_control ? { type: "text", text: p.text, cache_control: p.cache_control } : { type: "text", text: p.text });
      // A refusal the model gave is what it said that turn: text, as a streamed delta.refusal is (protocols.md §3.11).
      else if (p.type === "refusal" && !isBlank(p.refusal)) out.push({ type: "text", text: p.refusal });
    }
  }
  // The refusal field beside no text (an answer relayed back as it came: content null, refusal set) likewise.
  if (out.length === 0 && typeof m.refusal === "string" && !isBlank(m.refusal)) out.push({ type: "text", text: m.refusal });
  for (const tc of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    out.push({ type: "tool_use", id: safeToolId(tc.id), name: tc.function.name, input: parseArgs(tc.function.arguments) });
  }
  return out;
}

/** tool_use.input must be an object: invalid or non-object arguments are wrapped (vercel/ai's convention). */
export function parseArgs(args: string): Record<string, unknown> {
  if (!args) return {};
  try {
    const v = JSON.parse(args);
    return v && typeof v === "object" && !Array.isArray(v) ? v : { rawInvalidInput: v };
  } catch {
    return { rawInvalidInput: args };
  }
}
