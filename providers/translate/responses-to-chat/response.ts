// Chat completion -> Responses `response` object: a reasoning item (the reasoning text as its summary, the upstream's
// signed reasoning state as encrypted_content — see reasoning.ts), the message (output_text) and one function_call
// item per tool call; finish_reason length / content_filter make the response incomplete; usage in Responses terms.
// Web search sources (chat's url_citation annotations) are the output_text's annotations, after a web_search_call item.
import { randomBytes } from "node:crypto";
import { clientItem, encodeReasoning, withFull } from "./reasoning.ts";
import type { ChatFlavor } from "./request.ts";
import { clientName, type ToolNames } from "./tools.ts";
import { callStatus } from "./call-status.ts";
import { responsesAnnotations, webSearchCall } from "./annotations.ts";

import { cacheReadTokensOf, cacheWriteTokensOf } from "../../codecs/openai-chat-usage.ts";
/** Where the chat answer came from and what the client asked to see. */
export interface AnswerContext {
  flavor: ChatFlavor;
  provider: string;
  /** encrypted_content goes to the client (include, or store: false). */
  show: boolean;
  /** Flattened namespace tools: a call's upstream name -> the name and namespace the client knows. */
  names?: ToolNames;
  /** The most a stream builds up of its answer (server.upstream_limits.answer_bytes; unset: the default). */
  answerBytes?: number;
}

/** What the Response echoes from the request. */
export interface ResponseEcho {
  model?: string;
  instructions: string | null;
  tools: unknown[];
  tool_choice: unknown;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  store: boolean;
  text: unknown;
  reasoning: unknown;
  truncation: string;
  top_logprobs: number;
  max_tool_calls: number | null;
  background: boolean;
  service_tier: string;
  user: string | null;
}

export function echoOf(body: any): ResponseEcho {
  return {
    model: body.model,
    instructions: typeof body.instructions === "string" ? body.instructions : null,
    tools: Array.isArray(body.tools) ? body.tools.map(echoTool) : [],
    tool_choice: body.tool_choice ?? "auto",
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    store: body.store ?? true,
    text: body.text ?? { format: { type: "text" } },
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    // Settings a translated upstream has no counterpart for, at the values that describe what happens.
    truncation: "disabled",
    top_logprobs: typeof body.top_logprobs === "number" ? body.top_logprobs : 0,
    max_tool_calls: body.max_tool_calls ?? null,
    background: false,
    service_tier: "default",
    user: typeof body.user === "string" ? body.user : null,
  };
}

/** A function tool as the API echoes it: `strict` and `parameters` always there (null when the request set none). */
function echoTool(t: any): unknown {
  if (t?.type !== "function") return t;
  return { ...t, parameters: t.parameters ?? null, strict: typeof t.strict === "boolean" ? t.strict : null };
}

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export function responsesUsage(u: any) {
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const input = num(u?.prompt_tokens);
  const output = num(u?.completion_tokens);
  return {
    input_tokens: input,
    // Both required by the API's description (cache_write_tokens since July 2026); 0 when the upstream said nothing.
    input_tokens_details: { cached_tokens: cacheReadTokensOf(u), cache_write_tokens: cacheWriteTokensOf(u) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: num(u?.completion_tokens_details?.reasoning_tokens) },
    total_tokens: num(u?.total_tokens) || input + output,
  };
}

/** finish_reason -> status and incomplete_details. */
export function statusOf(finish: string | null | undefined) {
  if (finish === "length") return { status: "incomplete" as const, incomplete_details: { reason: "max_output_tokens" } };
  if (finish === "content_filter") return { status: "incomplete" as const, incomplete_details: { reason: "content_filter" } };
  return { status: "completed" as const, incomplete_details: null };
}

/** `tier`: the service tier the upstream says served the request (a chat answer's service_tier), when it says one. */
export function responseShell(id: string, createdAt: number, echo: ResponseEcho, model: string | undefined, tier?: unknown) {
  return {
    id, object: "response", created_at: createdAt, status: "in_progress", error: null, incomplete_details: null,
    ...echo, model: model ?? echo.model ?? "", ...servedTier(tier), output: [] as unknown[], previous_response_id: null, usage: null as unknown,
  };
}

/** The response's service_tier is the tier that served it (OpenAI's description): the upstream's when it names one. */
export function servedTier(tier: unknown): { service_tier?: string } {
  return typeof tier === "string" && tier ? { service_tier: tier } : {};
}

/**
 * The reasoning item for a reasoning text and/or the upstream's reasoning_details; undefined when there is neither.
 * `field`: the chat field the text came in (reasoning_content, reasoning), recorded for a chat upstream so the text
 * goes back to it in a later turn (DeepSeek's thinking mode refuses a tool loop without it: request.ts).
 */
export function reasoningItem(id: string, text: string, details: unknown[], ctx: AnswerContext, field?: string): Record<string, unknown> | undefined {
  if (!text && !details.length) return undefined;
  const item: Record<string, unknown> = { type: "reasoning", id, summary: text ? [{ type: "summary_text", text }] : [] };
  // The gateway's blob always, even with no state in it (a Gemini or Groq turn): a client that keeps encrypted reasoning
  // (Codex, store false) then sends back what the native passthrough recognises and drops (withoutGatewayReasoning),
  // not a bare id OpenAI never issued ("Item with id rs_… not found").
  item.encrypted_content = encodeReasoning(ctx.flavor, details, ctx.provider, ctx.flavor === "chat" && text ? field : undefined);
  return item;
}

/** The response as the client sees it (encrypted_content only when asked), the full one kept behind it. */
export function shownResponse<T extends { output: unknown[] }>(full: T, show: boolean): T {
  if (show || !full.output.some((o: any) => o?.type === "reasoning" && o.encrypted_content !== undefined)) return full;
  return withFull({ ...full, output: full.output.map((o) => clientItem(o, false)) }, full);
}

export function chatToResponse(chat: any, echo: ResponseEcho, ctx: AnswerContext): unknown {
  const choice = chat?.choices?.[0];
  const msg = choice?.message ?? {};
  const output: unknown[] = [];
  const field = typeof msg.reasoning_content === "string" ? "reasoning_content" : "reasoning";
  const reasoning = msg[field];
  const r = reasoningItem(newId("rs"), typeof reasoning === "string" ? reasoning : "", Array.isArray(msg.reasoning_details) ? msg.reasoning_details : [], ctx, field);
  if (r) output.push(r);
  const text = typeof msg.content === "string" ? msg.content : "";
  const refusal = typeof msg.refusal === "string" && msg.refusal ? msg.refusal : "";
  if (text || refusal || !msg.tool_calls?.length) {
    const logprobs = Array.isArray(choice?.logprobs?.content) ? choice.logprobs.content : [];
    const annotations = msg.annotations ? responsesAnnotations(msg.annotations) : [];
    // The search came before the answer that cites it, as in OpenAI's output.
    if (annotations.length) output.push(webSearchCall(newId("ws"), "completed"));
    const content: unknown[] = text || !refusal ? [{ type: "output_text", text, annotations, logprobs }] : [];
    if (refusal) content.push({ type: "refusal", refusal });
    // The message is the last item when no call follows it: the one a cut answer (length, content_filter) ended in.
    const status = msg.tool_calls?.length ? "completed" : statusOf(choice?.finish_reason).status;
    output.push({ type: "message", id: newId("msg"), status, role: "assistant", content });
  }
  for (const c of msg.tool_calls ?? []) {
    const args = c.function?.arguments ?? "";
    output.push({ type: "function_call", id: newId("fc"), call_id: c.id, ...clientName(ctx.names, c.function?.name ?? ""), arguments: args, status: callStatus(args, statusOf(choice?.finish_reason).status) });
  }
  const created = typeof chat?.created === "number" ? chat.created : Math.floor(Date.now() / 1000);
  const shell = responseShell(newId("resp"), created, echo, chat?.model, chat?.service_tier);
  const extra = chat?.providerMetadata ? { providerMetadata: chat.providerMetadata } : {};
  return shownResponse({ ...shell, ...statusOf(choice?.finish_reason), output, usage: responsesUsage(chat?.usage), ...extra }, ctx.show);
}
