// Chat completion -> Responses `response` object: reasoning text, the message (output_text) and one function_call
// item per tool call; finish_reason length / content_filter make the response incomplete; usage in Responses terms.
import { randomBytes } from "node:crypto";

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
}

export function echoOf(body: any): ResponseEcho {
  return {
    model: body.model,
    instructions: typeof body.instructions === "string" ? body.instructions : null,
    tools: body.tools ?? [],
    tool_choice: body.tool_choice ?? "auto",
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    store: body.store ?? true,
    text: body.text ?? { format: { type: "text" } },
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
  };
}

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

export function responsesUsage(u: any) {
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const input = num(u?.prompt_tokens);
  const output = num(u?.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: num(u?.prompt_tokens_details?.cached_tokens) },
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

export function responseShell(id: string, createdAt: number, echo: ResponseEcho, model: string | undefined) {
  return {
    id, object: "response", created_at: createdAt, status: "in_progress", error: null, incomplete_details: null,
    ...echo, model: model ?? echo.model ?? "", output: [] as unknown[], previous_response_id: null, usage: null as unknown,
  };
}

export function chatToResponse(chat: any, echo: ResponseEcho): unknown {
  const choice = chat?.choices?.[0];
  const msg = choice?.message ?? {};
  const output: unknown[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === "string" && reasoning) {
    output.push({ type: "reasoning", id: newId("rs"), summary: [{ type: "summary_text", text: reasoning }] });
  }
  const text = typeof msg.content === "string" ? msg.content : "";
  if (text || !msg.tool_calls?.length) {
    output.push({
      type: "message", id: newId("msg"), status: "completed", role: "assistant",
      content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
    });
  }
  for (const c of msg.tool_calls ?? []) {
    output.push({ type: "function_call", id: newId("fc"), call_id: c.id, name: c.function?.name, arguments: c.function?.arguments ?? "", status: "completed" });
  }
  const created = typeof chat?.created === "number" ? chat.created : Math.floor(Date.now() / 1000);
  const shell = responseShell(newId("resp"), created, echo, chat?.model);
  const extra = chat?.providerMetadata ? { providerMetadata: chat.providerMetadata } : {};
  return { ...shell, ...statusOf(choice?.finish_reason), output, usage: responsesUsage(chat?.usage), ...extra };
}
