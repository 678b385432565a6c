// Responses request -> chat completions request. `instructions` becomes the system message; input items become
// messages: the assistant-side items of one turn (reasoning, message, function_call) one assistant message — text,
// tool_calls and the turn's replayed reasoning (reasoning_details out of encrypted_content, see reasoning.ts, and a
// chat host's reasoning text, which the driver places as its host takes it: replayed-reasoning-text.ts) —
// since separate assistant messages would split the turn Anthropic needs whole (thinking first, then tool_use);
// function_call_output a tool message. text.format becomes response_format, reasoning.effort reasoning_effort.
// Fields chat has no place for are dropped and reported (x-mg-dropped-params); unknown fields are dropped silently.
// `flavor` is the upstream the chat body goes on to (chat itself, or chat-to-messages / chat-to-gemini): it decides
// which reasoning blobs replay and how far files and reasoning.summary can go.
import { invalidRequest } from "../../../core/errors.ts";
import { decodeReasoning } from "./reasoning.ts";
import { addReplayedText } from "../replayed-reasoning-text.ts";
import { statedOutputLimit } from "../../../core/metering/output-limit.ts";
import { allowedKey, chatTools, upstreamName, type ToolNames } from "./tools.ts";
import { unsignedToolId } from "../chat-to-gemini/response.ts";
import { markClient, type Origin } from "../client-names.ts";
import { RESPONSES_SPELLING } from "./client-spelling.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { fitEffort, thinkingOffFor } from "../../../core/metering/reasoning-efforts.ts";
import { chatFileName, dataUrlType } from "../file-name.ts";

export type ChatFlavor = "chat" | "messages" | "gemini";

export interface ResponsesToChat {
  body: Record<string, unknown>;
  dropped: string[];
  /** Namespaced tools flattened for the upstream: the names their calls go back to the client under. */
  names: ToolNames;
}

const DATA_URL = /^data:[^;,]+;base64,/;
const MIME_BY_EXT: Record<string, string> = {
  pdf: "application/pdf", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp",
  txt: "text/plain", md: "text/markdown", csv: "text/csv", html: "text/html", json: "application/json",
};

/** input_file.file_data: a data: URL, or bare base64 whose type the filename gives. */
function fileDataUrl(p: any, field: string): string {
  if (DATA_URL.test(p.file_data)) return p.file_data;
  const ext = /\.([a-z0-9]+)$/i.exec(p.filename ?? "")?.[1]?.toLowerCase();
  const mime = ext && MIME_BY_EXT[ext];
  if (!mime) throw invalidRequest("file_data must be a base64 data: URL, or base64 with a filename whose extension gives its type (e.g. report.pdf)", `${field}.filename`);
  return `data:${mime};base64,${p.file_data}`;
}

function filePart(p: any, field: string, flavor: ChatFlavor, urlFiles: boolean): object {
  if (p.file_id) throw invalidRequest("file_id needs the upstream's own Files API, which this model's provider is not reached through; send file_data or file_url", `${field}.file_id`);
  if (typeof p.file_data === "string" && p.file_data) {
    // OpenAI refuses file_data without a filename: a data: URL sent without one is named by its type.
    const url = fileDataUrl(p, field);
    return { type: "file", file: { file_data: url, filename: p.filename || chatFileName(dataUrlType(url) ?? "application/octet-stream") } };
  }
  if (typeof p.file_url === "string" && p.file_url) {
    if (!/^https:\/\//i.test(p.file_url)) throw invalidRequest("file_url must be an https URL", `${field}.file_url`);
    // An OpenAI-protocol upstream takes no file URLs; Anthropic and Gemini take a URL document (their translators read
    // it from an image_url part by the URL's extension: a PDF becomes a document / fileData with its type); Converse's
    // half, and Claude on Bedrock InvokeModel or Vertex, download an image_url part and send what it serves, a PDF as
    // a document (`urlFiles`): only first-party Anthropic, which fetches the URL itself, needs its name to say PDF.
    if (flavor === "chat" && !urlFiles) throw invalidRequest("file_url is not supported by this model's provider (it takes files as file_data only); send file_data", `${field}.file_url`);
    if (flavor === "messages" && !urlFiles && !/\.pdf($|\?)/i.test(p.file_url)) throw invalidRequest("file_url must point to a PDF (.pdf) for this model's provider", `${field}.file_url`);
    return { type: "image_url", image_url: { url: p.file_url } };
  }
  throw invalidRequest("input_file needs file_data or file_url", field);
}

function part(p: any, field: string, flavor: ChatFlavor, urlFiles: boolean, origin: Origin | undefined): object {
  const made = partOf(p, field, flavor, urlFiles);
  origin?.(made, p);
  return made;
}

function partOf(p: any, field: string, flavor: ChatFlavor, urlFiles: boolean): object {
  if (p.type === "input_image") {
    if (p.file_id) throw invalidRequest("file_id needs the upstream's own Files API, which this model's provider is not reached through; send image_url", `${field}.file_id`);
    if (typeof p.image_url !== "string" || !p.image_url) throw invalidRequest("input_image needs image_url (an https URL or a data: URL)", `${field}.image_url`);
    // Chat's detail levels are low/high/auto; "original" (full resolution) is the closest to high.
    const detail = p.detail === "original" ? "high" : p.detail;
    return { type: "image_url", image_url: { url: p.image_url, ...(detail ? { detail } : {}) } };
  }
  if (p.type === "input_file") return filePart(p, field, flavor, urlFiles);
  return { type: "text", text: p.text ?? "" };
}

/** A message's text: its text parts, and a refusal part's refusal (what the model said that turn: every upstream takes it as text). */
const textOf = (content: any): string =>
  typeof content === "string" ? content : (content ?? []).map((p: any) => (p?.type === "refusal" ? p.refusal : p?.text) ?? "").join("");

/** function_call_output.output: a string, or parts — text goes in the tool message, images and files after the run. */
function toolOutput(output: any, field: string, flavor: ChatFlavor, urlFiles: boolean, origin: Origin | undefined): { text: string; media: unknown[] } {
  if (typeof output === "string") return { text: output, media: [] };
  const media: unknown[] = [];
  let text = "";
  (Array.isArray(output) ? output : []).forEach((p: any, j: number) => {
    if (p?.type === "input_text" || p?.type === "output_text") text += p.text ?? "";
    else media.push(part(p, `${field}[${j}]`, flavor, urlFiles, origin));
  });
  return { text, media };
}

/** `origin` is told what each chat object was made of (only when a refusal is named as the client sent it: client-names.ts). */
/** target: the chat model, whose efforts reasoning.effort is fitted to (flavor chat only). */
/** urlFiles: the next half downloads a URL part (Converse: chat-to-converse/url-media.ts; Claude on Bedrock or Vertex: claude-url-sources.ts), so file_url goes on as one. */
interface Opts { flavor?: ChatFlavor; urlFiles?: boolean; provider?: string; origin?: Origin; target?: Pick<Target, "upstreamModel" | "reasoningModel"> }

/**
 * reasoning.effort as the chat model takes it (reasoning-efforts.ts): none as the model's own off (DeepSeek's thinking
 * field) or its least effort, an effort it does not take (gpt-oss's minimal) as the nearest that costs no more; named
 * when changed. Without a target (another protocol follows) it goes as sent.
 */
function chatEffort(effort: string, target: Opts["target"], dropped: string[]): Record<string, unknown> {
  if (!target) return { reasoning_effort: effort };
  const off = effort === "none" ? thinkingOffFor(target) : undefined;
  if (off) {
    if (off.named) dropped.push("reasoning.effort");
    return { ...off.fields, ...(off.effort ? { reasoning_effort: off.effort } : {}) };
  }
  const fit = fitEffort(target, effort);
  if (fit.fitted) dropped.push("reasoning.effort");
  return { reasoning_effort: fit.effort };
}

/** The chat body made again, telling `origin` where its objects came from. */
const retrace = (client: any, _target: unknown, opts: Opts, origin: Origin) => responsesToChatRequest(client, { ...opts, origin }).body;

export function responsesToChatRequest(body: any, opts: Opts = {}): ResponsesToChat {
  const flavor = opts.flavor ?? "chat";
  const origin = opts.origin;
  const urlFiles = opts.urlFiles === true;
  // Call ids a Gemini model made carry its signature (chat-to-gemini/response.ts): only Gemini wants it back; it would
  // take the id past other upstreams' limits (OpenAI 40 characters, Converse 64). Calls and outputs alike, so they pair.
  const callId = flavor === "gemini" ? (id: unknown) => id : unsignedToolId;
  const dropped: string[] = [];
  const messages: any[] = [];
  if (typeof body.instructions === "string" && body.instructions) {
    const msg = { role: "system", content: body.instructions };
    origin?.(msg, "instructions");
    messages.push(msg);
  }
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  /** Reasoning sent before its turn's first assistant item: blobs' reasoning_details, a chat host's texts. */
  let pending: unknown[] = [];
  let pendingText: string[] = [];
  /** Images and files out of tool outputs: a user message once the run of tool messages ends. */
  let toolMedia: unknown[] = [];
  const flushMedia = () => {
    if (toolMedia.length) messages.push({ role: "user", content: toolMedia });
    toolMedia = [];
  };
  /** The assistant message of the current turn (made on its first item), carrying the turn's reasoning. */
  const assistant = (): any => {
    let last = messages.at(-1);
    if (last?.role !== "assistant") {
      flushMedia();
      last = { role: "assistant", content: null };
      messages.push(last);
    }
    if (pending.length) {
      last.reasoning_details = [...(last.reasoning_details ?? []), ...pending];
      pending = [];
    }
    for (const text of pendingText) addReplayedText(last, text);
    pendingText = [];
    return last;
  };
  input.forEach((item: any, i: number) => {
    const field = `input[${i}]`;
    const type = item.type ?? "message";
    if (type === "function_call") {
      const m = assistant();
      const call = { id: callId(item.call_id), type: "function", function: { name: upstreamName(item), arguments: item.arguments } };
      origin?.(call, item);
      (m.tool_calls ??= []).push(call);
    } else if (type === "reasoning") {
      const blob = decodeReasoning(item.encrypted_content);
      // Only the upstream protocol (and for chat, the provider) that made the blob can verify it; others drop it.
      if (!blob || blob.p !== flavor || (flavor === "chat" && blob.n !== opts.provider)) return;
      pending.push(...blob.d);
      // A chat host's reasoning text goes back to it only where its convention takes it (DeepSeek's thinking mode
      // refuses a tool loop without it; an unknown or strict host gets no field the client never sent): the driver
      // places it, the client sent no field for it.
      const text = (Array.isArray(item.summary) ? item.summary.map((p: any) => p?.text ?? "").join("") : "") || blob.x;
      if (flavor === "chat" && blob.t && text) pendingText.push(text);
      if (messages.at(-1)?.role === "assistant") assistant(); // within a turn already begun: it joins that turn
    } else if (type === "function_call_output") {
      const out = toolOutput(item.output, `${field}.output`, flavor, urlFiles, origin);
      const msg = { role: "tool", tool_call_id: callId(item.call_id), content: out.text };
      origin?.(msg, item);
      messages.push(msg);
      toolMedia.push(...out.media);
    } else if (type === "message") {
      const role = item.role === "developer" ? "system" : item.role;
      if (role === "assistant") {
        const text = textOf(item.content);
        const m = assistant();
        // Text after the turn's tool calls (an upstream may stream it between their fragments) joins the turn's one
        // message too: a second assistant message between the calls and their tool messages is refused by OpenAI.
        if (text) m.content = (m.content ?? "") + text;
        else if (m.content === null && !m.tool_calls) m.content = ""; // chat wants content or tool_calls
        return;
      }
      flushMedia();
      pending = []; // reasoning not followed by its assistant turn has nothing to attach to
      pendingText = [];
      const msg = typeof item.content === "string" || role === "system"
        ? { role, content: textOf(item.content) }
        : { role, content: item.content.map((p: any, j: number) => part(p, `${field}.content[${j}]`, flavor, urlFiles, origin)) };
      origin?.(msg, item);
      messages.push(msg);
    } else if (type === "item_reference") {
      // The endpoint resolves references from the store before any translation; one left here has nothing behind it.
      throw invalidRequest("item_reference needs a stored response item", `${field}.id`);
    } else {
      // A built-in tool's item sent back (web_search_call, …): only a native upstream knows it (DESIGN §10: dropped).
      dropped.push(`${field}.type=${String(type)}`);
    }
  });
  flushMedia();
  const out: Record<string, unknown> = { model: body.model, messages };
  // The limit under any alias the body carries (the largest): what the budget reserved.
  const limit = statedOutputLimit(body);
  if (limit !== undefined) out.max_completion_tokens = limit;
  for (const k of ["temperature", "top_p", "parallel_tool_calls"] as const) if (body[k] !== undefined && body[k] !== null) out[k] = body[k];
  const choice = body.tool_choice;
  // allowed_tools: only these tools may be called, the rest of the list stays as it was (OpenAI keeps it for prompt
  // caching): every upstream honours the same by seeing only the allowed ones.
  const allowed = choice?.type === "allowed_tools" ? new Set<string>((choice.tools ?? []).map(allowedKey)) : undefined;
  const tools = chatTools(body.tools, flavor === "messages" ? "yes" : flavor === "gemini" ? "alone" : "no", allowed, origin);
  dropped.push(...tools.dropped);
  if (choice && typeof choice === "object") {
    if (choice.type === "function") out.tool_choice = { type: "function", function: { name: upstreamName(choice) } };
    else if (choice.type === "allowed_tools") out.tool_choice = choice.mode === "required" ? "required" : "auto";
    else throw invalidRequest(`tool_choice type "${String(choice.type)}" is not supported for this model`, "tool_choice.type");
  } else if (typeof choice === "string") out.tool_choice = choice;
  if (tools.tools.length) out.tools = tools.tools;
  else if (choice && typeof choice === "object") delete out.tool_choice;
  // Where tool_choice "none" forbids tools, it forbids searching too.
  if (tools.webSearch && out.tool_choice !== "none") out.web_search_options = tools.webSearch;
  const format = body.text?.format;
  if (format?.type === "json_schema") {
    out.response_format = { type: "json_schema", json_schema: { name: format.name ?? "response", schema: format.schema, ...(format.description ? { description: format.description } : {}), ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}) } };
  } else if (format?.type === "json_object") {
    out.response_format = { type: "json_object" };
  }
  if (typeof body.text?.verbosity === "string") out.verbosity = body.text.verbosity;
  // The end user's id (safety_identifier replaces the deprecated user): chat's `user`, Anthropic's metadata.user_id.
  const user = typeof body.safety_identifier === "string" ? body.safety_identifier : body.user;
  if (typeof user === "string" && user) out.user = user;
  // Chat has the same prompt-cache routing knobs; translators to upstreams without them name them dropped.
  for (const k of ["prompt_cache_key", "prompt_cache_retention"] as const) if (typeof body[k] === "string" && body[k]) out[k] = body[k];
  // Chat has the same capacity tiers (auto | default | flex): a chat upstream takes it as sent, and the translators to
  // Anthropic, Gemini and Converse, which have none chosen this way, name it dropped as they do a chat client's.
  if (body.service_tier !== undefined && body.service_tier !== null) out.service_tier = body.service_tier;
  const effort = body.reasoning?.effort;
  if (effort) Object.assign(out, chatEffort(effort, flavor === "chat" ? opts.target : undefined, dropped));
  // providerOptions stays: routing already used `gateway`; provider-namespaced knobs reach chat drivers that know them.
  if (body.providerOptions !== undefined) out.providerOptions = body.providerOptions;
  const summary = body.reasoning?.summary;
  if (summary) {
    // Gemini returns thought text only when asked (includeThoughts, via the reasoningSummary knob); Anthropic returns
    // it whenever thinking is on; a chat upstream has no such switch.
    if (flavor === "gemini" && opts.provider && effort !== "none") {
      const po: any = body.providerOptions ?? {};
      out.providerOptions = { ...po, [opts.provider]: { ...po[opts.provider], reasoningSummary: summary } };
    } else if (!(flavor === "messages" && effort && effort !== "none")) dropped.push("reasoning.summary");
  }
  if (body.metadata) dropped.push("metadata");
  // truncation "auto" (drop the oldest items past the context window) is OpenAI's to do: a translated request is sent
  // whole, and the answer says "disabled".
  if (body.truncation === "auto") dropped.push("truncation");
  // include: only reasoning.encrypted_content has a meaning on a translated upstream (the rest are native features).
  // Token logprobs: chat upstreams have them (same shape as Responses'); Anthropic and Gemini (through chat) do not.
  const include: unknown[] = Array.isArray(body.include) ? body.include : [];
  const topLogprobs = typeof body.top_logprobs === "number" && body.top_logprobs > 0 ? body.top_logprobs : 0;
  if (include.includes("message.output_text.logprobs") || topLogprobs) {
    if (flavor === "chat") {
      out.logprobs = true;
      if (topLogprobs) out.top_logprobs = topLogprobs;
    } else dropped.push(topLogprobs ? "top_logprobs" : "include.message.output_text.logprobs");
  }
  for (const k of include) if (k !== "reasoning.encrypted_content" && k !== "message.output_text.logprobs") dropped.push(`include.${String(k)}`);
  if (body.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // response.completed carries the final usage
  }
  // What a chat step refuses or leaves out is named as this client sent it.
  return { body: markClient(out, RESPONSES_SPELLING, retrace, body, undefined, opts), dropped, names: tools.names };
}
