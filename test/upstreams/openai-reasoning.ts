// How reasoning models on OpenAI-compatible chat hosts answer and what they check, for the fake OpenAI upstream
// (OpenAI's own chat API returns no reasoning at all, so the fake returns none unless told which host it plays).
// Asked for reasoning (reasoning_effort other than none), the model reasons before it answers or calls, and:
// - "reasoning" (Groq, gpt-oss with reasoning_format parsed): the text in message.reasoning / delta.reasoning; an
//   assistant message carrying reasoning_content or reasoning_details is refused with Groq's error.
// - "reasoning_content" (DeepSeek's thinking mode): the text in reasoning_content; an assistant message with tool
//   calls in the current tool loop that comes back without its reasoning_content is refused with DeepSeek's error.
// - "reasoning_details" (OpenRouter on an OpenAI reasoning model): the summary in `reasoning` and the encrypted
//   reasoning in reasoning_details (whole, in one delta when streaming); an encrypted entry sent back that this fake did
//   not make (altered, or another host's) is refused, as OpenAI refuses reasoning it cannot decrypt.
// Apart from those, a model that reasons on its own and takes no effort (xAI's grok-4) refuses any reasoning_effort
// with xAI's 400 (effortRefusal), and OpenAI's models that cannot reason (gpt-4.1...) refuse it with OpenAI's 400
// "Unsupported parameter: 'reasoning_effort' is not supported with this model." (unsupportedEffortError).
import { randomBytes } from "node:crypto";
import type { OpenAIRequestError } from "./openai-checks.ts";

export type ReasoningHost = "reasoning" | "reasoning_content" | "reasoning_details";

/** The reasoning text the model produces for an effort: tests find the effort that reached the upstream in it. */
export const reasoningFor = (effort: string) => `Thinking it over at ${effort} effort.`;

/** The effort a request asks the model to reason at, or undefined when it does not. */
export function askedEffort(body: any): string | undefined {
  const e = body?.reasoning_effort;
  return typeof e === "string" && e !== "none" ? e : undefined;
}

/** What the host refuses in the request's messages (reasoning sent back the wrong way), or undefined. `issued`: the encrypted reasoning it made. */
export function reasoningError(host: ReasoningHost, body: any, issued: ReadonlySet<string>): OpenAIRequestError | undefined {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const lastUser = messages.findLastIndex((m) => m?.role === "user");
  for (const [i, m] of messages.entries()) {
    if (m?.role !== "assistant") continue;
    if (host === "reasoning") {
      const field = ["reasoning_content", "reasoning_details"].find((k) => m[k] !== undefined);
      if (field) return { message: `'messages.${i}' : for 'role:assistant' the following must be satisfied[('messages.${i}' : property '${field}' is unsupported)]`, param: `messages.${i}` };
    } else if (host === "reasoning_content") {
      if (askedEffort(body) && i > lastUser && m.tool_calls?.length && typeof m.reasoning_content !== "string") {
        return { message: `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`, param: `messages.${i}` };
      }
    } else {
      for (const d of Array.isArray(m.reasoning_details) ? m.reasoning_details : []) {
        if (d?.type === "reasoning.encrypted" && !issued.has(d.data)) {
          return { message: "The encrypted content for this reasoning item could not be verified.", param: `messages.${i}.reasoning_details` };
        }
      }
    }
  }
  return undefined;
}

/** OpenAI's models that cannot reason (GPT-4.1, GPT-4o, GPT-4, GPT-3.5, the gpt-5*-chat variants): they refuse any effort. */
export const isOpenAINonReasoningModel = (model: unknown): boolean =>
  typeof model === "string" && (/^(gpt-4|gpt-3\.5|chatgpt-4o)/.test(model) || /^gpt-5(\.\d+)?-chat/.test(model));

/** OpenAI's 400 for an effort sent to such a model (`param` as the API names it: reasoning_effort on chat, reasoning.effort on Responses). */
export function unsupportedEffortError(model: unknown, effort: unknown, param: "reasoning_effort" | "reasoning.effort") {
  if (effort === undefined || effort === null || !isOpenAINonReasoningModel(model)) return undefined;
  return { error: { message: `Unsupported parameter: '${param}' is not supported with this model.`, type: "invalid_request_error", param, code: "unsupported_parameter" } };
}

/** xAI's answer to reasoning_effort on a model without the knob (its own error shape, not OpenAI's), or undefined. */
export function effortRefusal(body: any, refusing: readonly string[] | undefined): { code: string; error: string } | undefined {
  if (body?.reasoning_effort === undefined || !refusing?.includes(body.model)) return undefined;
  return { code: "Client specified an invalid argument", error: `Model ${body.model} does not support parameter reasoningEffort.` };
}

/** The fields the answer carries, whole (the message of a JSON answer, or joined from the stream's deltas). */
export function reasoningFields(host: ReasoningHost, effort: string, issued: Set<string>): Record<string, unknown> {
  const text = reasoningFor(effort);
  if (host === "reasoning_details") {
    const data = `gAAAAB${randomBytes(24).toString("base64")}`;
    issued.add(data);
    return { reasoning: text, reasoning_details: [{ type: "reasoning.encrypted", data, id: `rs_${randomBytes(8).toString("hex")}`, format: "openai-responses-v1", index: 0 }] };
  }
  return { [host]: text };
}

/** The same fields as stream deltas: the text word by word, then reasoning_details whole. */
export function reasoningDeltas(fields: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const k of ["reasoning", "reasoning_content"]) {
    const text = fields[k];
    if (typeof text === "string") for (const w of text.match(/\s*\S+/g) ?? []) out.push({ [k]: w });
  }
  if (fields.reasoning_details) out.push({ reasoning_details: fields.reasoning_details });
  return out;
}
