// What the real Responses API checks before it answers, for the fake OpenAI /responses upstream (reference
// protocols-2 §1.2–1.3), with the real error bodies: unknown parameters, function tools in the chat shape, unknown
// tool types, a previous_response_id or item it does not hold, tool outputs without their call and calls without
// their output, reasoning items it cannot verify, reasoning knobs sent to a model that cannot reason.
import { isOpenAINonReasoningModel, unsupportedEffortError } from "./openai-reasoning.ts";

export interface ResponsesRequestError { status: number; message: string; param: string | null; code: string | null }

/**
 * Every top-level parameter POST /v1/responses accepts: openai 6.x ResponseCreateParams, and `client_metadata` (string
 * pairs the API takes beside them: OpenAI's own Codex CLI sends its installation, session and turn ids there).
 */
export const KNOWN_PARAMS = new Set([
  "background", "client_metadata", "context_management", "conversation", "include", "input", "instructions", "max_output_tokens",
  "max_tool_calls", "metadata", "model", "moderation", "parallel_tool_calls", "previous_response_id", "prompt",
  "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning", "safety_identifier",
  "service_tier", "store", "stream", "stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs",
  "top_p", "truncation", "user",
]);

/** Every parameter POST /v1/responses/input_tokens accepts: openai 6.x InputTokenCountParams. */
export const COUNT_PARAMS = new Set([
  "conversation", "input", "instructions", "model", "parallel_tool_calls", "personality", "previous_response_id",
  "reasoning", "text", "tool_choice", "tools", "truncation",
]);

/** Tool types the API knows (function tools are flat: name, parameters at the top). */
export const TOOL_TYPES = [
  "function", "file_search", "computer", "computer_use_preview", "web_search", "web_search_2025_08_26", "mcp",
  "code_interpreter", "image_generation", "local_shell", "shell", "custom", "namespace", "tool_search",
  "web_search_preview", "web_search_preview_2025_03_11", "apply_patch",
];

const bad = (message: string, param: string | null, code: string | null = null, status = 400): ResponsesRequestError => ({ status, message, param, code });

/** The body's own checks; `known`: the route's parameters (a create's, or the count's COUNT_PARAMS). */
export function paramsError(body: any, known: Set<string> = KNOWN_PARAMS): ResponsesRequestError | undefined {
  if (!body || typeof body !== "object" || Array.isArray(body)) return bad("We could not parse the JSON body of your request.", null, "invalid_json");
  for (const k of Object.keys(body)) if (!known.has(k)) return bad(`Unknown parameter: '${k}'.`, k, "unknown_parameter");
  if (typeof body.model !== "string" || !body.model) return bad("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    if (!TOOL_TYPES.includes(t?.type)) {
      return bad(`Invalid value: '${t?.type}'. Supported values are: ${TOOL_TYPES.map((x) => `'${x}'`).join(", ")}.`, `tools[${i}].type`, "invalid_value");
    }
    if (t.type === "function" && (typeof t.name !== "string" || !t.name)) {
      return bad(`Missing required parameter: 'tools[${i}].name'.`, `tools[${i}].name`, "missing_required_parameter");
    }
  }
  return undefined;
}

/**
 * What a model that cannot reason (gpt-4.1, gpt-4o...) refuses: reasoning.effort ("Unsupported parameter") and the
 * encrypted reasoning include asks for. A summary alone it takes (it has nothing to summarise).
 */
export function modelParamsError(body: any): ResponsesRequestError | undefined {
  const effort = unsupportedEffortError(body.model, body.reasoning?.effort, "reasoning.effort");
  if (effort) return bad(effort.error.message, effort.error.param, effort.error.code);
  if (isOpenAINonReasoningModel(body.model) && Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content")) {
    return bad("Encrypted content is not supported with this model.", "include");
  }
  return undefined;
}

/**
 * The conversation's own checks: every function_call_output answers an earlier function_call (by call_id), every
 * function_call is answered, and a reasoning item sent back is either held by the server or carries encrypted
 * content the server issued (`verify`).
 */
export function conversationError(items: any[], heldIds: Set<string>, verify: (encrypted: string) => boolean): ResponsesRequestError | undefined {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const it of items) {
    if (it?.type === "function_call") calls.add(it.call_id);
    if (it?.type === "function_call_output") {
      if (!calls.has(it.call_id)) return bad(`No tool call found for function call output with call_id ${it.call_id}.`, "input");
      answered.add(it.call_id);
    }
    if (it?.type === "reasoning") {
      if (typeof it.encrypted_content === "string") {
        if (!verify(it.encrypted_content)) return bad(`The encrypted content for item ${it.id} could not be verified.`, null, "invalid_encrypted_content");
      } else if (!heldIds.has(it.id)) {
        return bad(`Item with id '${it.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, "input", null, 404);
      }
    }
  }
  for (const id of calls) if (!answered.has(id)) return bad(`No tool output found for function call ${id}.`, "input");
  return undefined;
}
