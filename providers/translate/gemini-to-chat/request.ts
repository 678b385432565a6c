// Gemini GenerateContentRequest -> chat completions request (reference §4.3 read in reverse), for models whose
// provider speaks chat, messages (through chat-to-messages) or Converse (through chat-to-converse).
// Choices:
// - systemInstruction -> a system message; consecutive turns of one role are merged first (as Gemini does).
// - A model turn -> one assistant message: text, functionCall -> tool_calls (the call's id, else one made from its
//   position, which its functionResponse finds again), and the reasoning its thoughtSignatures carry (reasoning.ts).
// - A user turn: each functionResponse -> a tool message answering its call (by id, else the first unanswered call
//   of that name), in the calls' order, then the rest: text, inlineData (images, audio, PDFs and other files as data
//   URLs; text/* decoded to text), an image's fileData as a URL (a PDF's too when the next half downloads it: Converse,
//   Claude on Bedrock or Vertex; a video or audio URL, a Files API or gs:// URI is a 400: no chat part reads those). A response holding an `error` and no `output` (Gemini CLI's
//   failed tool call) is an error result: "Error: <error>", as messages-to-chat writes Anthropic's is_error.
// - functionDeclarations -> function tools (Gemini's OpenAPI-style schema -> JSON Schema); toolConfig -> tool_choice.
// - generationConfig -> sampling knobs, response_format (responseSchema / responseJsonSchema), and thinkingConfig ->
//   reasoning_effort on a model that can think (budget rounded up to an effort level; includeThoughts alone or a
//   dynamic budget is "medium"); on one that cannot, it is dropped and reported.
// - Only Gemini can serve Google's built-in tools (googleSearch, codeExecution, …), a cachedContent or non-text
//   output: such a request passes a translated target over (Unsupported), so a Gemini endpoint later in the route
//   can take it, else the client gets the 400. topK, safetySettings, logprobs and labels are dropped and reported.
import { GatewayError, invalidRequest } from "../../../core/errors.ts";
import { Unsupported } from "../../../core/contracts/translator.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { geminiThinkingEffort } from "../../../core/metering/thinking.ts";
import { fitEffort, thinkingOffFor } from "../../../core/metering/reasoning-efforts.ts";
import { jsonSchemaOf } from "./schema.ts";
import { replayedReasoning, type BlobScope } from "./reasoning.ts";
import { addReplayedText } from "../replayed-reasoning-text.ts";
import { markClient, type Origin } from "../client-names.ts";
import { GEMINI_SPELLING } from "./client-spelling.ts";
import { chatFileName } from "../file-name.ts";

/** `urlPdfs`: the next half downloads a URL part and sends a PDF it serves as a document (Converse: url-media.ts; Claude on Bedrock or Vertex: claude-url-sources.ts). */
export interface GeminiScope extends BlobScope { urlPdfs?: boolean }

/** Who reads a PDF fileData from its URL: Gemini itself, and the upstreams whose URLs the gateway downloads. */
const PDF_URL_READERS = "Gemini, Bedrock models and Claude on Vertex (the gateway downloads it for those two)";

export interface Translated {
  body: Record<string, unknown>;
  dropped: string[];
}

/** `at[j]` is the client's own path of `parts[j]` (`contents[3].parts[0]`), merged or not. */
interface Turn { role: string; parts: any[]; index: number; last: number; at: string[] }
interface Call { id: string; name: string; answered: boolean }

/** Files API URIs (https://generativelanguage.googleapis.com/v1beta/files/…): files only Gemini can read. */
const FILES_API = /^https:\/\/generativelanguage\.googleapis\.com\//i;

/** A YouTube video link: Gemini reads the video itself; Google's examples send it as fileData without a mimeType. */
function youTube(uri: string): boolean {
  let host: string;
  try {
    host = new URL(uri).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === "youtu.be" || host === "youtube.com" || host.endsWith(".youtube.com");
}

const AUDIO_FORMAT: Record<string, string> = { "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mp3": "mp3", "audio/mpeg": "mp3" };

function unsupported(field: string, what: string, target: Target, provider: string): Unsupported {
  return new Unsupported(new GatewayError(400, "INVALID_REQUEST",
    `${field}: ${what} only a Gemini upstream can serve; ${target.modelId} on provider ${provider} is reached through translation`,
    { details: { field, provider } }));
}

/**
 * Consecutive contents of one role as one turn (a missing role is the user's, as in a single-turn request); index is
 * the first content's, last the last one's. Each part keeps the path it had in the client's body, so a refused part is
 * named where the client sent it, not where it sits in the merged turn.
 */
function mergedTurns(contents: any[]): Turn[] {
  const out: Turn[] = [];
  contents.forEach((c, index) => {
    const role = c.role === "model" ? "model" : "user";
    const parts: any[] = c.parts ?? [];
    const at = parts.map((_, j) => `contents[${index}].parts[${j}]`);
    const last = out.at(-1);
    if (last?.role === role) {
      last.parts.push(...parts);
      last.at.push(...at);
      last.last = index;
    } else out.push({ role, parts: [...parts], index, last: index, at });
  });
  return out;
}

/** A failed call's response (Gemini CLI: `{error: "<message>"}`): its error, when it has one and no output. */
function responseError(r: any): string | undefined {
  if (!r || typeof r !== "object" || r.output !== undefined || r.error === undefined || r.error === null) return undefined;
  return typeof r.error === "string" ? r.error : JSON.stringify(r.error);
}

/** A functionResponse's `response` as tool-message text: the output string itself when that is all it holds. */
function responseText(r: any): string {
  if (r === undefined || r === null) return "";
  if (typeof r !== "object") return String(r);
  const error = responseError(r);
  if (error !== undefined) return error ? `Error: ${error}` : "Error";
  const keys = Object.keys(r);
  if (keys.length === 1 && ["output", "content", "result"].includes(keys[0]!) && typeof r[keys[0]!] === "string") return r[keys[0]!];
  return JSON.stringify(r);
}

function mediaPart(p: any, field: string, urlPdfs: boolean): Record<string, unknown> | undefined {
  if (p.inlineData) {
    const { mimeType, data } = p.inlineData;
    const mime = String(mimeType).toLowerCase();
    if (mime.startsWith("image/")) return { type: "image_url", image_url: { url: `data:${mime};base64,${data}` } };
    if (AUDIO_FORMAT[mime]) return { type: "input_audio", input_audio: { data, format: AUDIO_FORMAT[mime] } };
    if (mime.startsWith("text/")) return { type: "text", text: Buffer.from(data, "base64").toString("utf8") };
    // OpenAI refuses file_data without a filename: the part's displayName, else one from its type.
    return { type: "file", file: { file_data: `data:${mime};base64,${data}`, filename: chatFileName(mime, p.inlineData.displayName) } };
  }
  if (p.fileData) {
    const uri = String(p.fileData.fileUri);
    if (!/^https?:\/\//i.test(uri) || FILES_API.test(uri)) throw invalidRequest("fileData.fileUri must be an http(s) URL for this model's provider (Files API and gs:// URIs are Gemini's own)", `${field}.fileData.fileUri`);
    // A chat request takes a file by URL only as an image: a PDF, video or audio URL would reach it as one. A half
    // that downloads it sends a PDF as a document (what the URL serves decides, as for an image).
    const mime = typeof p.fileData.mimeType === "string" ? p.fileData.mimeType.toLowerCase() : "";
    if (mime === "application/pdf" && !urlPdfs) {
      throw invalidRequest(`fileData of type application/pdf is read from its URL only by ${PDF_URL_READERS}: send it as inlineData or call one of those models`, `${field}.fileData.mimeType`);
    }
    if (mime && !mime.startsWith("image/") && mime !== "application/pdf") {
      throw invalidRequest(`fileData of type ${mime} is read from its URL by Gemini only: send it as inlineData (PDFs, audio) or call a Gemini model`, `${field}.fileData.mimeType`);
    }
    // Untyped is taken for an image, but a YouTube link is a video whatever its type says.
    if (youTube(uri)) throw invalidRequest("fileData of a YouTube video is read from its URL by Gemini only: call a Gemini model", `${field}.fileData.fileUri`);
    return { type: "image_url", image_url: { url: uri } };
  }
  return undefined;
}

/**
 * A function call's id as the upstream made it: Gemini CLI renames ids to `<name>__<id>` on both the call and its
 * response, which can outgrow what an upstream takes (OpenAI: at most 40 characters).
 */
function upstreamId(id: unknown, name: string): string | undefined {
  if (typeof id !== "string" || !id) return undefined;
  return id.startsWith(`${name}__`) && id.length > name.length + 2 ? id.slice(name.length + 2) : id;
}

/** A model turn as an assistant message; undefined when it says nothing an upstream could take back. */
function assistantMessage(turn: Turn, scope: BlobScope, calls: Call[], origin?: Origin): Record<string, unknown> | undefined {
  let text = "";
  const toolCalls: Record<string, unknown>[] = [];
  turn.parts.forEach((p, k) => {
    if (p.functionCall) {
      const id = upstreamId(p.functionCall.id, p.functionCall.name) ?? `call_${turn.index}_${k}`;
      calls.push({ id, name: p.functionCall.name, answered: false });
      const call = { id, type: "function", function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) } };
      origin?.(call, p);
      toolCalls.push(call);
    } else if (typeof p.text === "string" && p.thought !== true) text += p.text;
  });
  const reasoning = replayedReasoning(turn.parts, scope);
  // A turn of thoughts alone (Gemini CLI keeps none of them) says nothing.
  if (!text && !toolCalls.length && !reasoning.details.length && !reasoning.text) return undefined;
  const msg: Record<string, unknown> = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (toolCalls.length) msg.tool_calls = toolCalls;
  if (reasoning.details.length) msg.reasoning_details = reasoning.details;
  if (reasoning.text) addReplayedText(msg, reasoning.text);
  return msg;
}

/** A user turn: the tool messages answering the previous turn's calls (in the calls' order), then the rest. */
function userMessages(turn: Turn, calls: Call[], scope: GeminiScope, origin?: Origin): Record<string, unknown>[] {
  const tools: { rank: number; msg: Record<string, unknown> }[] = [];
  const content: Record<string, unknown>[] = [];
  const resultMedia: Record<string, unknown>[] = [];
  turn.parts.forEach((p, j) => {
    const field = turn.at[j]!;
    if (p.functionResponse) {
      const fr = p.functionResponse;
      const id = upstreamId(fr.id, fr.name);
      let at = id ? calls.findIndex((c) => !c.answered && c.id === id) : -1;
      if (at === -1) at = calls.findIndex((c) => !c.answered && c.name === fr.name);
      if (at === -1) throw invalidRequest(`functionResponse "${fr.name}" answers no function call of the previous model turn`, `${field}.functionResponse`);
      calls[at]!.answered = true;
      const msg: Record<string, unknown> = { role: "tool", tool_call_id: calls[at]!.id, content: responseText(fr.response) };
      // Chat has no error flag: the inner half of a chain (chat-to-messages, chat-to-converse) reads this one; an
      // OpenAI-protocol upstream would refuse the unknown field, and has the "Error: " text.
      if (scope.flavor !== "chat" && responseError(fr.response) !== undefined) msg.is_error = true;
      origin?.(msg, p);
      tools.push({ rank: at, msg });
      (Array.isArray(fr.parts) ? fr.parts : []).forEach((q: any, n: number) => {
        const m = mediaPart(q, `${field}.functionResponse.parts[${n}]`, scope.urlPdfs === true);
        if (m) {
          origin?.(m, q);
          resultMedia.push(m);
        }
      });
    } else if (typeof p.text === "string") {
      if (p.thought !== true && p.text) {
        const m = { type: "text", text: p.text };
        origin?.(m, p);
        content.push(m);
      }
    } else {
      const m = mediaPart(p, field, scope.urlPdfs === true);
      if (m) {
        origin?.(m, p);
        content.push(m); // executableCode and other Gemini-only parts have no chat equivalent
      }
    }
  });
  const out = tools.sort((a, b) => a.rank - b.rank).map((t) => t.msg);
  // Media inside function responses cannot ride in a tool message: it follows as user content.
  const rest = resultMedia.concat(content);
  if (rest.length) out.push({ role: "user", content: rest.length === 1 && rest[0]!.type === "text" ? rest[0]!.text : rest });
  return out;
}

function tools(body: any, out: Record<string, unknown>, target: Target, provider: string, origin?: Origin): void {
  const decls: any[] = [];
  (Array.isArray(body.tools) ? body.tools : []).forEach((t: any, i: number) => {
    for (const k of Object.keys(t ?? {})) {
      if (k === "functionDeclarations") decls.push(...(Array.isArray(t[k]) ? t[k] : []));
      else throw unsupported(`tools[${i}].${k}`, `the built-in tool "${k}" is one`, target, provider);
    }
  });
  let list = decls.map((d) => {
    const tool = {
      type: "function",
      function: {
        name: d.name,
        ...(d.description ? { description: d.description } : {}),
        parameters: d.parametersJsonSchema ?? (d.parameters ? jsonSchemaOf(d.parameters) : { type: "object", properties: {} }),
      },
    };
    origin?.(tool, d);
    return tool;
  });
  const fcc = body.toolConfig?.functionCallingConfig;
  const mode = fcc?.mode;
  if (mode === "NONE") out.tool_choice = "none";
  else if (mode === "AUTO" || mode === "VALIDATED") out.tool_choice = "auto";
  else if (mode === "ANY") {
    const allowed: string[] = Array.isArray(fcc.allowedFunctionNames) ? fcc.allowedFunctionNames : [];
    if (allowed.length === 1) out.tool_choice = { type: "function", function: { name: allowed[0] } };
    else {
      if (allowed.length) list = list.filter((t) => allowed.includes(t.function.name));
      out.tool_choice = "required";
    }
  }
  if (list.length) out.tools = list;
  else delete out.tool_choice;
}

function generation(body: any, out: Record<string, unknown>, dropped: string[], target: Target, scope: BlobScope, provider: string): void {
  const gc = body.generationConfig ?? {};
  const copy: [string, string][] = [["temperature", "temperature"], ["topP", "top_p"], ["maxOutputTokens", "max_tokens"], ["seed", "seed"], ["presencePenalty", "presence_penalty"], ["frequencyPenalty", "frequency_penalty"]];
  for (const [from, to] of copy) if (typeof gc[from] === "number") out[to] = gc[from];
  if (Array.isArray(gc.stopSequences) && gc.stopSequences.length) out.stop = gc.stopSequences;
  if (typeof gc.candidateCount === "number" && gc.candidateCount > 1) out.n = gc.candidateCount;
  for (const k of ["topK", "responseLogprobs", "logprobs", "speechConfig", "mediaResolution"]) if (gc[k] !== undefined && gc[k] !== false) dropped.push(`generationConfig.${k}`);
  const modalities: unknown[] = Array.isArray(gc.responseModalities) ? gc.responseModalities : [];
  if (modalities.some((m) => String(m).toUpperCase() !== "TEXT")) throw unsupported("generationConfig.responseModalities", "output other than text is something", target, provider);
  const mime = typeof gc.responseMimeType === "string" ? gc.responseMimeType.toLowerCase() : "";
  if (mime === "application/json") {
    const schema = gc.responseJsonSchema ?? (gc.responseSchema ? jsonSchemaOf(gc.responseSchema) : undefined);
    out.response_format = schema ? { type: "json_schema", json_schema: { name: "response", schema } } : { type: "json_object" };
  } else if (mime && mime !== "text/plain") {
    // Enum mode (text/x.enum) has no chat form: its schema goes with it, and is named too.
    dropped.push("generationConfig.responseMimeType");
    for (const k of ["responseSchema", "responseJsonSchema"]) if (gc[k] !== undefined) dropped.push(`generationConfig.${k}`);
  }
  // Thinking off (budget 0), to a chat model that reasons when asked nothing: its own off (DeepSeek's thinking field,
  // GPT-5.1's none), else the least effort it takes, named (reasoning-efforts.ts).
  const off = gc.thinkingConfig?.thinkingBudget === 0 && scope.flavor === "chat" ? thinkingOffFor(target) : undefined;
  let effort = off ? off.effort : reasoningEffort(gc.thinkingConfig, target, scope);
  // An effort the chat model does not take (grok-3-mini's medium, gpt-oss's minimal): the nearest that costs no more.
  const fitted = !off && effort && scope.flavor === "chat" ? fitEffort(target, effort) : undefined;
  if (fitted) effort = fitted.effort;
  if (effort === null || off?.named || fitted?.fitted) dropped.push("generationConfig.thinkingConfig");
  if (off?.fields) Object.assign(out, off.fields);
  if (effort) out.reasoning_effort = effort;
}

/**
 * thinkingConfig -> reasoning_effort: undefined when thinking is not asked for (or turned off: budget 0), null when
 * asked of a model that cannot think. OpenAI-protocol upstreams know no effort above high.
 */
function reasoningEffort(tc: any, target: Target, scope: BlobScope): string | null | undefined {
  const effort = geminiThinkingEffort(tc, scope.flavor === "chat" ? "high" : "max");
  if (!effort) return undefined;
  return target.reasoning ? effort : null;
}

/** The chat body made again, telling `origin` where its objects came from. */
const retrace = (client: any, target: Target | undefined, scope: GeminiScope, origin: Origin) => geminiToChatRequest(client, target!, scope, scope.provider, origin).body;

/** `origin` is told what each chat object was made of (only when a refusal is named as the client sent it: client-names.ts). */
export function geminiToChatRequest(body: any, target: Target, scope: GeminiScope, provider: string, origin?: Origin): Translated {
  const dropped: string[] = [];
  // A cache the translated model never sees.
  if (typeof body.cachedContent === "string" && body.cachedContent) throw unsupported("cachedContent", "a context cache is something", target, provider);
  if (Array.isArray(body.safetySettings) && body.safetySettings.length) dropped.push("safetySettings");
  if (body.labels !== undefined) dropped.push("labels");
  const messages: Record<string, unknown>[] = [];
  const system = (body.systemInstruction?.parts ?? []).filter((p: any) => typeof p?.text === "string" && p.thought !== true).map((p: any) => p.text).join("\n");
  if (system) {
    const msg = { role: "system", content: system };
    origin?.(msg, "systemInstruction");
    messages.push(msg);
  }
  let calls: Call[] = [];
  for (const turn of mergedTurns(body.contents)) {
    // A chat message is one client content, or several merged: then only the list is certain.
    const from = origin && (turn.last === turn.index ? body.contents[turn.index] : "contents");
    if (turn.role === "model") {
      calls = [];
      const msg = assistantMessage(turn, scope, calls, origin);
      if (msg) {
        origin?.(msg, from);
        messages.push(msg);
      }
    } else {
      const out = userMessages(turn, calls, scope, origin);
      if (origin) for (const m of out) if (m.role === "user") origin(m, from);
      messages.push(...out);
      calls = [];
    }
  }
  const out: Record<string, unknown> = { model: body.model, messages };
  tools(body, out, target, provider, origin);
  generation(body, out, dropped, target, scope, provider);
  if (body.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // the last event carries usageMetadata
  }
  // providerOptions stays: routing already used `gateway`; provider-namespaced knobs reach the drivers that know them.
  if (body.providerOptions !== undefined) out.providerOptions = body.providerOptions;
  // What a chat step refuses or leaves out (a chat host's stop limit: Gemini itself takes 5) is named as this client sent it.
  return { body: markClient(out, GEMINI_SPELLING, retrace, body, target, scope), dropped };
}
