// What the real chat completions API checks in a request's message sequence, for the fake OpenAI upstream: every
// tool message answers a tool call of the assistant message just before its run of tool messages, and every tool
// call is answered there. The error bodies are the real API's.
import { sampleFor } from "./schema-sample.ts";

export interface OpenAIRequestError { message: string; param: string }

export function messagesError(messages: any[]): OpenAIRequestError | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role === "tool") {
      let k = i - 1;
      while (k >= 0 && messages[k].role === "tool") k--;
      const owner = messages[k];
      if (!owner || owner.role !== "assistant" || !Array.isArray(owner.tool_calls) || !owner.tool_calls.length) {
        return { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: `messages.[${i}].role` };
      }
      if (!owner.tool_calls.some((tc: any) => tc.id === m.tool_call_id)) {
        return { message: `Invalid parameter: 'tool_call_id' of '${m.tool_call_id}' not found in 'tool_calls' of previous message.`, param: `messages.[${i}].tool_call_id` };
      }
    }
    if (m?.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length) {
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k].role === "tool"; k++) answered.add(messages[k].tool_call_id);
      const missing = m.tool_calls.map((tc: any) => tc.id).filter((id: string) => !answered.has(id));
      if (missing.length) {
        return { message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`, param: `messages.[${i}].role` };
      }
    }
  }
  return undefined;
}

/** An output limit above what the model writes (`max`): the real API's 400 (gpt-4o writes at most 16384). */
export function limitError(body: any, max: number | undefined): OpenAIRequestError | undefined {
  for (const param of ["max_tokens", "max_completion_tokens"]) {
    const n = body?.[param];
    if (max !== undefined && typeof n === "number" && n > max) {
      return { message: `${param} is too large: ${n}. This model supports at most ${max} completion tokens, whereas you provided ${n}.`, param };
    }
  }
  return undefined;
}

/** response_format: a JSON answer matching the schema (json_schema) or some JSON object (json_object); else undefined. */
export function structuredAnswer(body: any): string | undefined {
  const rf = body?.response_format;
  if (rf?.type === "json_object") return JSON.stringify({ answer: "sample" });
  if (rf?.type === "json_schema") return JSON.stringify(sampleFor(rf.json_schema?.schema ?? { type: "object" }));
  return undefined;
}

/** The real API's checks on response_format.json_schema: a name, and strict schemas closed at every object. */
export function responseFormatError(body: any): OpenAIRequestError | undefined {
  const rf = body?.response_format;
  if (rf?.type !== "json_schema") return undefined;
  if (typeof rf.json_schema?.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(rf.json_schema.name)) {
    return { message: "Missing required parameter: 'response_format.json_schema.name'.", param: "response_format.json_schema.name" };
  }
  if (rf.json_schema.strict === true && rf.json_schema.schema?.type === "object" && rf.json_schema.schema.additionalProperties !== false) {
    return { message: `Invalid schema for response_format '${rf.json_schema.name}': In context=(), 'additionalProperties' is required to be supplied and to be false.`, param: "response_format" };
  }
  return undefined;
}

/** Tool results came in after the last assistant message (even with user text after them): the model answers. */
export function toolsAnswered(messages: any[]): boolean {
  for (let i = (messages?.length ?? 0) - 1; i >= 0 && messages[i].role !== "assistant"; i--) if (messages[i].role === "tool") return true;
  return false;
}
