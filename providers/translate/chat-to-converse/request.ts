// Chat completions request -> Bedrock Converse request (reference protocols-2 §2.2, §2.9, pitfalls §2.10).
// Choices: system/developer messages (anywhere) go to `system`; consecutive tool messages become one user turn of
// toolResult blocks and same-role turns are merged (Converse wants user/assistant alternation); images and PDFs must be
// bytes (Bedrock fetches no URLs: a remote image_url is downloaded before sending, url-media.ts); a history with
// toolUse/toolResult always gets a toolConfig (Bedrock refuses it otherwise), with placeholder specs for the tools it
// names when the request offers none; `none` drops the tools. cache_control on a content part, a message or a tool
// becomes a cachePoint after its block (cache-points.ts, which also places caching "auto"). Reasoning on Claude models
// is `additionalModelRequestFields.thinking` (signed reasoning in the history is replayed from reasoning_details /
// thinking_blocks); other families' reasoning knobs are dropped. A JSON response_format asked of Claude is a tool whose
// input is the answer, forced alone or beside the client's tools one the model must call (left out for tool_choice
// "required": json-output.ts); asked of a model AWS lists for structured outputs it is Bedrock's
// outputConfig.textFormat (output-config.ts), dropped and named elsewhere. A function's parameters go as the object
// schema Bedrock wants (tool-input-schema.ts).
import { invalidRequest } from "../../../core/errors.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { chatThinkingTokens, knobsFor, thinkingKnob } from "../../../core/metering/thinking.ts";
import { isConverseClaude, outputAsk, statedOutputLimit } from "../../../core/metering/output-limit.ts";
import { replayedThinking } from "../chat-to-messages/reasoning.ts";
import { markerOf, placeCachePoints, type Block, type Marker, type Marks, type Turn } from "./cache-points.ts";
import { unsignedToolId } from "../chat-to-gemini/response.ts";
import { blankLastTurn, EMPTY_RESULT, isBlank } from "../blank-text.ts";
import { plainChatTools } from "../chat-tool-forms.ts";
import { claudeStopSequences, stopList } from "../claude-stop-sequences.ts";
import { safeToolId } from "../foreign-tool-id.ts";
import { assistantText, textOf } from "../chat-text.ts";
import { objectToolSchema, parametersField } from "../tool-input-schema.ts";
import { besideToolsChoice, jsonOutputSpec, refuseJsonToolName } from "./json-output.ts";
import { jsonToolBesideTools } from "../chat-to-messages/request.ts";
import { converseOutputConfig } from "./output-config.ts";
import { askStopSequence } from "./stop-sequence.ts";
import { ConverseUrls, IMAGE_FORMATS } from "./url-media.ts";

export interface Translated<T> {
  body: T;
  dropped: string[];
  /** Set when response_format asked Claude for JSON: the tool whose input is the answer (never a tool call to the client). */
  jsonTool?: string;
  /** Image and PDF URLs to download before the body is sent (url-media.ts). */
  urls?: ConverseUrls;
}

const DATA_URL = /^data:([^;,]+);base64,(.+)$/s;
const DOC_FORMATS: Record<string, string> = { "application/pdf": "pdf", "text/csv": "csv", "text/html": "html", "text/plain": "txt", "text/markdown": "md" };
// Converse caches at cachePoint blocks only: no prompt-cache routing key or retention. It has no end-user id either.
const UNSUPPORTED = ["logit_bias", "logprobs", "top_logprobs", "seed", "presence_penalty", "frequency_penalty", "service_tier", "verbosity", "prompt_cache_key", "prompt_cache_retention", "user", "safety_identifier"];

/** The last marked part's cache_control (a system message's parts become one block). */
function partsMarker(content: any): Marker | undefined {
  return Array.isArray(content) ? markerOf(content.findLast((p: any) => p?.cache_control)?.cache_control) : undefined;
}

/**
 * A whole message's marker (cache_control beside its role) on its last block that can carry a point, unless a part
 * already marks it; as on Anthropic (chat-to-messages), reasoning carries none, and a message with no such block
 * (blank, or only reasoning) leaves the marker out, named in x-mg-dropped-params.
 */
function markLast(blocks: Block[], marker: Marker | undefined, marks: Marks, dropped: string[]): void {
  if (!marker) return;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if ("reasoningContent" in b) continue;
    if (!marks.has(b)) marks.set(b, marker);
    return;
  }
  if (!dropped.includes("cache_control")) dropped.push("cache_control");
}

function userBlocks(content: any, i: number, docs: { n: number }, urls: ConverseUrls, marks: Marks, dropped: string[]): Block[] {
  if (typeof content === "string") return isBlank(content) ? [] : [{ text: content }];
  const out: Block[] = [];
  content.forEach((p: any, j: number) => {
    const field = `messages[${i}].content[${j}]`;
    const before = out.length;
    if (p.type === "text") {
      if (!isBlank(p.text)) out.push({ text: p.text }); // Bedrock refuses blank text
      // A blank part's marker ends the same prefix as the block kept before it (as on Anthropic, chat-to-messages):
      // it moves there, unless that block has its own; with none before it in the message, it is named.
      else if (markerOf(p.cache_control)) markLast(out, markerOf(p.cache_control), marks, dropped);
    } else if (p.type === "image_url") {
      const url: unknown = p.image_url?.url;
      const m = DATA_URL.exec(typeof url === "string" ? url : "");
      if (m) {
        const format = IMAGE_FORMATS[m[1]!.toLowerCase()];
        if (!format) throw invalidRequest(`image type ${m[1]} is not supported (png, jpeg, gif, webp)`, `${field}.image_url.url`);
        out.push({ image: { format, source: { bytes: m[2] } } });
      } else if (typeof url === "string" && /^https?:\/\//i.test(url)) {
        // Bedrock fetches no URLs: downloaded before sending (an image or a PDF, as it serves; an http one is the
        // guard's 400), url-media.ts.
        out.push(urls.block(url, `${field}.image_url.url`));
      } else throw invalidRequest("image_url must be an https URL or a base64 data URL", `${field}.image_url.url`);
    } else if (p.type === "file") {
      const m = typeof p.file?.file_data === "string" ? DATA_URL.exec(p.file.file_data) : null;
      const format = m && DOC_FORMATS[m[1]!.toLowerCase()];
      if (!m || !format) throw invalidRequest("only file_data (a base64 data URL of a PDF, CSV, HTML, text or Markdown file) is supported for this model's provider", `${field}.file`);
      // Document names must be unique in a request and plain (letters, digits, spaces, hyphens, brackets).
      out.push({ document: { format, name: `document-${++docs.n}`, source: { bytes: m[2] } } });
    } else {
      throw invalidRequest(`content part type ${p.type} is not supported for this model's provider`, `${field}.type`);
    }
    const marker = markerOf(p.cache_control);
    if (marker && out.length > before) marks.set(out[out.length - 1]!, marker);
  });
  return out;
}

function parseArgs(s: string, field: string): unknown {
  try {
    const v = JSON.parse(s || "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : { value: v };
  } catch {
    throw invalidRequest("tool call arguments must be a JSON object", field);
  }
}

/** The last turn answers tool calls whose assistant turn does not start with its reasoning (it was not replayed). */
function loopWithoutThinking(turns: Turn[]): boolean {
  const last = turns.at(-1);
  const prev = turns.at(-2);
  if (last?.role !== "user" || !last.content.some((b) => "toolResult" in b) || prev?.role !== "assistant") return false;
  return !(prev.content[0] && "reasoningContent" in prev.content[0]);
}

export function chatToConverseRequest(sent: any, target: Target, cacheAuto = false): Translated<Record<string, unknown>> {
  const dropped: string[] = [];
  const body = plainChatTools(sent, dropped); // legacy functions, allowed_tools, custom tools (chat-tool-forms.ts)
  for (const k of UNSUPPORTED) if (body[k] !== undefined && body[k] !== null && body[k] !== false) dropped.push(k);
  if (typeof body.n === "number" && body.n > 1) dropped.push("n");
  const claude = isConverseClaude(target.upstreamModel);
  const json = claude ? jsonOutputSpec(body, dropped) : undefined;
  const outputConfig = claude ? undefined : converseOutputConfig(body, target.upstreamModel, dropped);
  const system: Block[] = [];
  const turns: Turn[] = [];
  const usedTools = new Set<string>();
  const docs = { n: 0 };
  const urls = new ConverseUrls();
  const marks: Marks = new Map();
  const push = (role: Turn["role"], content: Block[]) => {
    if (!content.length) return; // Bedrock refuses empty content (Envoy drops such messages too)
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  let blankUser: number | undefined; // a user message left with no content, while it is the client's last turn
  body.messages.forEach((m: any, i: number) => {
    if (m.role === "user" || m.role === "assistant" || m.role === "tool") blankUser = undefined;
    switch (m.role) {
      case "system":
      case "developer": {
        const t = textOf(m.content);
        const marker = markerOf(m.cache_control) ?? partsMarker(m.content);
        if (isBlank(t)) { // Bedrock refuses blank text: left out, with the marker it held (named, as markLast does)
          if (marker && !dropped.includes("cache_control")) dropped.push("cache_control");
          break;
        }
        const block = { text: t };
        system.push(block);
        if (marker) marks.set(block, marker);
        break;
      }
      case "user": {
        const blocks = userBlocks(m.content, i, docs, urls, marks, dropped);
        markLast(blocks, markerOf(m.cache_control), marks, dropped);
        if (!blocks.length) blankUser = i;
        push("user", blocks);
        break;
      }
      case "assistant": {
        const blocks: Block[] = [];
        for (const r of replayedThinking(m)) {
          blocks.push(r.type === "thinking"
            ? { reasoningContent: { reasoningText: { text: r.thinking, signature: r.signature } } }
            : { reasoningContent: { redactedContent: r.data } });
        }
        const t = assistantText(m);
        if (!isBlank(t)) blocks.push({ text: t }); // text precedes toolUse (pitfall §2.10.3)
        (m.tool_calls ?? []).forEach((tc: any, k: number) => {
          usedTools.add(tc.function.name);
          blocks.push({ toolUse: { toolUseId: safeToolId(unsignedToolId(tc.id)), name: tc.function.name, input: parseArgs(tc.function.arguments, `messages[${i}].tool_calls[${k}].function.arguments`) } });
        });
        // The message's or its parts' marker: a point after the turn's last block (its parts became one text block).
        markLast(blocks, markerOf(m.cache_control) ?? partsMarker(m.content), marks, dropped);
        push("assistant", blocks);
        break;
      }
      case "tool": {
        const text = textOf(m.content);
        // Blank text is refused and an error result needs non-empty content (pitfall §2.10.2): a placeholder.
        // A failed result a translator marked (a Gemini functionResponse with only an error) is Converse's error status.
        const block = { toolResult: { toolUseId: safeToolId(unsignedToolId(m.tool_call_id)), content: [{ text: isBlank(text) ? EMPTY_RESULT : text }], ...(m.is_error === true ? { status: "error" } : {}) } };
        // toolResult content cannot hold a cachePoint: a marked result (message or part) gets one after the block.
        const marker = markerOf(m.cache_control) ?? partsMarker(m.content);
        if (marker) marks.set(block, marker);
        push("user", [block]);
        break;
      }
    }
  });

  if (blankUser !== undefined && turns.at(-1)?.role !== "user") throw blankLastTurn(blankUser);
  urls.after(docs.n);
  // A final assistant turn is a prefill, which Claude refuses ending in whitespace (reference §2.2): trimmed.
  const prefill = turns.at(-1)?.role === "assistant" ? turns.at(-1)!.content.at(-1) : undefined;
  if (prefill && "text" in prefill && isConverseClaude(target.upstreamModel)) prefill.text = (prefill.text as string).trimEnd();

  const out: Record<string, unknown> = { messages: turns };
  if (system.length) out.system = system;
  if (outputConfig) out.outputConfig = outputConfig;

  const tools: any[] = Array.isArray(body.tools) ? body.tools.filter((t: any) => t?.type === "function" || t?.function) : [];
  const tc = body.tool_choice;
  const historyNeedsTools = usedTools.size > 0 || turns.some((t) => t.content.some((b) => "toolResult" in b));
  // JSON beside the client's tools: theirs, then the JSON tool (their cache markers keep their prefix).
  const besideTools = json !== undefined && tools.length > 0 && tc !== "none";
  if (besideTools) refuseJsonToolName(tools);
  const offered = tc === "none" || (json && !besideTools) ? [] : tools;
  if (json && !besideTools) {
    // The forced JSON tool; a history's tools still get their placeholders (Bedrock wants them named), but for one of
    // the forced tool's name, which it already names (a name twice is refused; Anthropic sends the forced tool alone).
    const specs = [{ toolSpec: json }, ...(historyNeedsTools ? besideJsonTool(placeholderSpecs(tools, usedTools, marks), String(json.name), marks, dropped) : [])];
    out.toolConfig = { tools: specs, toolChoice: { tool: { name: json.name } } };
  } else if (offered.length) {
    const specs: Block[] = offered.map((t: any, k: number) => {
      const spec: Record<string, unknown> = { name: t.function.name, inputSchema: { json: objectToolSchema(t.function.parameters, parametersField(sent, t, k)) } };
      if (t.function.description) spec.description = t.function.description;
      if (t.function.strict === true) spec.strict = true;
      const block = { toolSpec: spec };
      const marker = markerOf(t.cache_control);
      if (marker) marks.set(block, marker);
      return block;
    });
    const toolConfig: Record<string, unknown> = { tools: specs };
    if (json) {
      // With tool_choice "required" only the client's tools: one of theirs must be called (json-output.ts).
      if (jsonToolBesideTools(tc)) specs.push({ toolSpec: json });
      toolConfig.toolChoice = besideToolsChoice(tc);
    } else if (tc === "auto") toolConfig.toolChoice = { auto: {} };
    else if (tc === "required") toolConfig.toolChoice = { any: {} };
    else if (tc && typeof tc === "object" && tc.function?.name) toolConfig.toolChoice = { tool: { name: tc.function.name } };
    out.toolConfig = toolConfig;
  } else if (historyNeedsTools) {
    // Bedrock wants a toolConfig whenever the history holds toolUse/toolResult (pitfall §2.10.1).
    out.toolConfig = { tools: placeholderSpecs(tools, usedTools, marks) };
    if (tc === "none" && tools.length) dropped.push("tool_choice");
  }
  const toolBlocks = (out.toolConfig as { tools?: Block[] } | undefined)?.tools;
  if (placeCachePoints({ tools: toolBlocks, system, turns }, marks, cacheAuto, target.upstreamModel)) dropped.push("cache_control");

  const ic: Record<string, unknown> = {};
  if (body.temperature !== undefined && body.temperature !== null) ic.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) ic.topP = body.top_p;
  // Claude refuses a blank stop sequence (claude-stop-sequences.ts); other families take it.
  const stops = claude ? claudeStopSequences(body.stop, dropped) : stopList(body.stop);
  if (stops) ic.stopSequences = stops;
  // Claude Sonnet 4.5, Haiku 4.5 and newer refuse temperature beside top_p, as on Anthropic (chat-to-messages): top_p is
  // named. After the thinking check below, which drops both (and names them in that order).
  const oneSampler = () => {
    if (isConverseClaude(target.upstreamModel) && "temperature" in ic && "topP" in ic) { delete ic.topP; dropped.push("top_p"); }
  };

  // The limit (any alias) and Claude's thinking budget below it, as outputAsk computes them. Thinking asked of Claude
  // is turned off, its knob named, as on Anthropic (chat-to-messages): when the client's limit cannot hold Anthropic's
  // minimum budget, a tool is forced (JSON mode too, alone or beside tools: Anthropic refuses forced tool use with
  // thinking; the force is what the client relies on), or a tool loop's turn came back without its thinking
  // (Anthropic refuses thinking then). The limit is the client's, else what the budget reserved (never none: Converse
  // would take the model's maximum).
  const ask = outputAsk(body, "chat", "converse", target);
  const choice = (out.toolConfig as { toolChoice?: Record<string, unknown> } | undefined)?.toolChoice;
  const forced = choice !== undefined && ("any" in choice || "tool" in choice);
  if (isConverseClaude(target.upstreamModel) && chatThinkingTokens(body, target) !== undefined && (ask.thinking === undefined || forced || loopWithoutThinking(turns))) {
    dropped.push(thinkingKnob(body, target));
    const limit = statedOutputLimit(body) ?? ask.limit;
    if (limit !== undefined) ic.maxTokens = limit;
    oneSampler();
    if (Object.keys(ic).length) out.inferenceConfig = ic;
    return answer(askStopSequence(out, target.upstreamModel), dropped, json, urls);
  }
  if (ask.thinking !== undefined) {
    out.additionalModelRequestFields = { thinking: { type: "enabled", budget_tokens: ask.thinking } };
    // With thinking on, temperature and top_p are not sent (as on chat-to-messages; reference §3.8): dropped, named.
    for (const k of ["temperature", "topP"] as const) if (k in ic) { delete ic[k]; dropped.push(k === "topP" ? "top_p" : k); }
  } else if (!isConverseClaude(target.upstreamModel) && body.reasoning_effort !== undefined && chatThinkingTokens(body, target) !== undefined) dropped.push("reasoning_effort");
  if (!isConverseClaude(target.upstreamModel)) {
    // Only Claude has a thinking field on Converse: the provider's own knobs are not honoured elsewhere.
    const knobs = knobsFor(body, target.provider);
    for (const k of ["reasoningEffort", "thinkingBudget"] as const) if (knobs?.[k] !== undefined) dropped.push(`providerOptions.${target.provider}.${k}`);
  }
  if (ask.limit !== undefined) ic.maxTokens = ask.limit;
  oneSampler();
  if (Object.keys(ic).length) out.inferenceConfig = ic;
  return answer(askStopSequence(out, target.upstreamModel), dropped, json, urls);
}

function answer(body: Record<string, unknown>, dropped: string[], json: { name?: unknown } | undefined, urls: ConverseUrls): Translated<Record<string, unknown>> {
  const t: Translated<Record<string, unknown>> = json ? { body, dropped, jsonTool: String(json.name) } : { body, dropped };
  if (urls.pending.length) t.urls = urls;
  return t;
}

/** The placeholders without the one named as the forced JSON tool; a client marker it carried has nothing to follow: named. */
function besideJsonTool(specs: Block[], name: string, marks: Marks, dropped: string[]): Block[] {
  return specs.filter((b) => {
    if ((b.toolSpec as { name: string }).name !== name) return true;
    if (marks.has(b) && !dropped.includes("cache_control")) dropped.push("cache_control");
    return false;
  });
}

/** Specs for the tools a history used, where none is offered: the client's tools by name (their markers kept), else those the history names. */
function placeholderSpecs(tools: any[], usedTools: Set<string>, marks: Marks): Block[] {
  const names = tools.length ? tools.map((t: any) => t.function.name) : [...usedTools];
  if (!names.length) names.push("tool");
  return names.map((name: string, k: number) => {
    const block = { toolSpec: { name, description: "A tool used earlier in this conversation.", inputSchema: { json: { type: "object", properties: {} } } } };
    const marker = tools.length ? markerOf(tools[k].cache_control) : undefined; // the client's tools, in order
    if (marker) marks.set(block, marker);
    return block;
  });
}
