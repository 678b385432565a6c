// Chat completions request -> Gemini generateContent request (reference §4.3).
// Choices: system/developer messages go to systemInstruction; consecutive tool messages become one user turn of
// functionResponse parts (the function name looked up from the assistant's tool_calls); JSON Schemas are cut down
// to the OpenAPI subset Gemini accepts (schema.ts); an image URL Gemini fetches itself (Files API, gs://, YouTube)
// travels as fileData, any other is downloaded by the gateway before sending (media-urls.ts: Gemini refuses it);
// logprobs, logit_bias, verbosity, service_tier and prediction (no Gemini counterpart) are dropped and reported.
import { invalidRequest } from "../../../core/errors.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { knobsFor } from "../../../core/metering/thinking.ts";
import { outputAsk } from "../../../core/metering/output-limit.ts";
import { geminiWebSearch, WEB_SEARCH_FIELD } from "../web-search.ts";
import { signatureOf } from "./response.ts";
import { SKIP_SIGNATURE } from "../gemini-native/index.ts";
import { geminiSchema } from "./schema.ts";
import { schemaBudget } from "./schema-refs.ts";
import { geminiToolParameters } from "./tool-parameters.ts";
import { parametersField } from "../tool-input-schema.ts";
import { geminiFetches, type PendingUrl } from "./media-urls.ts";
import { plainChatTools } from "../chat-tool-forms.ts";
import { assistantText, textOf } from "../chat-text.ts";

export interface Translated<T> {
  body: T;
  dropped: string[];
  /** Parts whose URL the gateway must download and inline before the body is sent. */
  pending: PendingUrl[];
}

const DATA_URL = /^data:([^;,]+);base64,(.+)$/s;
function mimeFromUrl(url: string): string {
  const ext = /\.([a-z0-9]+)(?:$|\?)/i.exec(url)?.[1]?.toLowerCase();
  return ({ png: "image/png", gif: "image/gif", webp: "image/webp", pdf: "application/pdf", mp4: "video/mp4", mp3: "audio/mp3", wav: "audio/wav" } as Record<string, string>)[ext ?? ""] ?? "image/jpeg";
}

function userParts(content: any, i: number, pending: PendingUrl[]): any[] {
  if (typeof content === "string") return [{ text: content }];
  return content.map((p: any, j: number) => {
    const field = `messages[${i}].content[${j}]`;
    if (p.type === "text") return { text: p.text };
    if (p.type === "image_url") {
      const m = DATA_URL.exec(p.image_url.url);
      if (m) return { inlineData: { mimeType: m[1], data: m[2] } };
      const url: string = p.image_url.url;
      if (!/^(https?|gs):\/\//i.test(url)) throw invalidRequest("image_url must be a URL or a base64 data URL", `${field}.image_url.url`);
      const part = { fileData: { mimeType: mimeFromUrl(url), fileUri: url } };
      if (!geminiFetches(url)) pending.push({ part, url, field: `${field}.image_url.url` });
      return part;
    }
    if (p.type === "input_audio") return { inlineData: { mimeType: `audio/${p.input_audio.format}`, data: p.input_audio.data } };
    if (p.type === "file") {
      const m = typeof p.file?.file_data === "string" ? DATA_URL.exec(p.file.file_data) : null;
      if (!m) throw invalidRequest("only file_data (a base64 data URL) is supported for this model's provider", `${field}.file`);
      return { inlineData: { mimeType: m[1], data: m[2] } };
    }
    throw invalidRequest(`content part type ${p.type} is not supported`, `${field}.type`);
  });
}

function parseArgs(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s || "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { rawInvalidInput: s };
  }
}

export function chatToGeminiRequest(sent: any, target: Target): Translated<Record<string, unknown>> {
  const dropped: string[] = [];
  const body = plainChatTools(sent, dropped); // legacy functions, allowed_tools, custom tools (chat-tool-forms.ts)
  // prompt_cache_key / _retention: Gemini caches implicitly or by a cachedContent resource, not by a routing key.
  // verbosity, service_tier: Gemini has neither a length knob nor tiers chosen per request; prediction (Predicted
  // Outputs' draft of the answer) has no Gemini hint either.
  for (const k of ["logit_bias", "logprobs", "top_logprobs", "prompt_cache_key", "prompt_cache_retention", "verbosity", "service_tier", "prediction"]) if (body[k] !== undefined && body[k] !== null && body[k] !== false) dropped.push(k);
  const pending: PendingUrl[] = [];
  const system: { text: string }[] = [];
  const contents: { role: string; parts: any[] }[] = [];
  const toolNames = new Map<string, string>();
  /** Tool-call id -> its position among the calls of its assistant message (functionResponses go in that order). */
  const callRank = new Map<string, number>();
  const rankOf = new Map<object, number>();
  const push = (role: string, parts: any[]) => {
    const last = contents[contents.length - 1];
    // Gemini wants alternating turns: consecutive same-role turns are merged.
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  body.messages.forEach((m: any, i: number) => {
    switch (m.role) {
      case "system":
      case "developer": {
        const t = textOf(m.content);
        if (t) system.push({ text: t });
        break;
      }
      case "user":
        push("user", userParts(m.content, i, pending));
        break;
      case "assistant": {
        const parts: any[] = [];
        const t = assistantText(m);
        if (t) parts.push({ text: t });
        for (const [k, tc] of (m.tool_calls ?? []).entries()) {
          toolNames.set(tc.id, tc.function.name);
          callRank.set(tc.id, k);
          const part: Record<string, unknown> = { functionCall: { name: tc.function.name, args: parseArgs(tc.function.arguments) } };
          const sig = signatureOf(tc.id);
          if (sig) part.thoughtSignature = sig;
          parts.push(part);
        }
        if (parts.length) push("model", parts);
        break;
      }
      case "tool": {
        const name = toolNames.get(m.tool_call_id);
        if (!name) throw invalidRequest("tool message does not answer a tool call of an earlier assistant message", `messages[${i}].tool_call_id`);
        const part = { functionResponse: { name, response: { name, content: textOf(m.content) } } };
        rankOf.set(part, callRank.get(m.tool_call_id)!);
        push("user", [part]);
        break;
      }
    }
  });
  // Gemini pairs a turn's functionResponses with the previous turn's functionCalls by position: answers in the
  // calls' order, before any other part of that user turn.
  for (const c of contents) {
    if (c.role !== "user" || !c.parts.some((p) => rankOf.has(p))) continue;
    const answers = c.parts.filter((p) => rankOf.has(p)).sort((a, b) => rankOf.get(a)! - rankOf.get(b)!);
    c.parts = answers.concat(c.parts.filter((p) => !rankOf.has(p)));
  }
  // Gemini refuses a replayed model turn whose first functionCall has no thoughtSignature: calls made by another
  // model (a fallback, a model switch) or by the client itself get Google's documented placeholder.
  for (const c of contents) {
    const first = c.role === "model" ? c.parts.find((p) => p.functionCall) : undefined;
    if (first && !first.thoughtSignature) first.thoughtSignature = SKIP_SIGNATURE;
  }

  const out: Record<string, unknown> = { contents };
  if (system.length) out.systemInstruction = { parts: system };
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const search = body.tool_choice === "none" ? undefined : geminiWebSearch(body, tools.length > 0, dropped);
  if (search) out.tools = [search];
  else if (body.web_search_options && body.tool_choice === "none") dropped.push(WEB_SEARCH_FIELD);
  // One output budget for all the request's schemas (inlining $refs could otherwise multiply each one).
  const budget = schemaBudget();
  if (tools.length) {
    out.tools = [{ functionDeclarations: tools.map((t: any, i: number) => {
      const fd: Record<string, unknown> = { name: t.function.name };
      if (t.function.description) fd.description = t.function.description;
      // A root union or map keeps its arguments (tool-parameters.ts: a map as parametersJsonSchema). A chain names the
      // field as its client sent it (chain.ts).
      return { ...fd, ...geminiToolParameters(t.function.parameters, parametersField(sent, t, i), budget, target.upstreamModel) };
    }) }];
    const tc = body.tool_choice;
    const mode = tc === "none" ? "NONE" : tc === "required" || (tc && typeof tc === "object") ? "ANY" : tc === "auto" ? "AUTO" : undefined;
    if (mode) {
      const fcc: Record<string, unknown> = { mode };
      if (tc && typeof tc === "object") fcc.allowedFunctionNames = [tc.function.name];
      out.toolConfig = { functionCallingConfig: fcc };
    }
  }
  const gc: Record<string, unknown> = {};
  if (body.temperature !== undefined && body.temperature !== null) gc.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) gc.topP = body.top_p;
  // The limit (any alias) and the thinking budget, as outputAsk computes them (what the budget reserved).
  const ask = outputAsk(body, "chat", "gemini", target);
  if (ask.limit !== undefined) gc.maxOutputTokens = ask.limit;
  if (body.stop !== undefined && body.stop !== null) gc.stopSequences = Array.isArray(body.stop) ? body.stop : [body.stop];
  if (typeof body.n === "number" && body.n > 1) gc.candidateCount = body.n;
  if (typeof body.seed === "number") gc.seed = body.seed;
  if (typeof body.presence_penalty === "number") gc.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === "number") gc.frequencyPenalty = body.frequency_penalty;
  const rf = body.response_format;
  if (rf?.type === "json_object") gc.responseMimeType = "application/json";
  else if (rf?.type === "json_schema") {
    gc.responseMimeType = "application/json";
    if (rf.json_schema?.schema) gc.responseSchema = geminiSchema(rf.json_schema.schema, "response_format.json_schema.schema", budget);
  }
  const thinking = thinkingConfig(body, target, ask.thinking);
  if (thinking) gc.thinkingConfig = thinking;
  const off = thinkingOffKnob(body, target.provider);
  if (off && ask.thinking) dropped.push(off); // a model that always thinks (2.5 Pro) gets its least budget instead
  if (Object.keys(gc).length) out.generationConfig = gc;
  return { body: out, dropped, pending };
}

/** The field that asked for thinking off (effort "none"), or undefined. */
function thinkingOffKnob(body: any, provider: string): string | undefined {
  const knob = knobsFor(body, provider)?.reasoningEffort;
  if (knob !== undefined) return knob === "none" ? `providerOptions.${provider}.reasoningEffort` : undefined;
  return body.reasoning_effort === "none" ? "reasoning_effort" : undefined;
}

/** The thinking budget (providerOptions.<provider>.thinkingBudget dollars / reasoningEffort) and reasoningSummary -> thinkingConfig. */
function thinkingConfig(body: any, target: Target, budget: number | undefined): Record<string, unknown> | undefined {
  const knobs = knobsFor(body, target.provider);
  const cfg: Record<string, unknown> = {};
  if (budget !== undefined) cfg.thinkingBudget = budget;
  if (knobs?.reasoningSummary) cfg.includeThoughts = true;
  return Object.keys(cfg).length ? cfg : undefined;
}
