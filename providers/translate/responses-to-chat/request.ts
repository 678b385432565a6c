// Responses request -> chat completions request. `instructions` becomes the system message; input items become
// messages (consecutive function_call items one assistant turn with tool_calls, function_call_output a tool message);
// text.format becomes response_format, reasoning.effort reasoning_effort. Fields chat has no place for are dropped
// and reported (x-mg-dropped-params); unknown fields are dropped silently.
export interface ResponsesToChat {
  body: Record<string, unknown>;
  dropped: string[];
}

function part(p: any): unknown {
  if (p.type === "input_image") return { type: "image_url", image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } };
  return { type: "text", text: p.text ?? "" };
}

function messageOf(item: any): Record<string, unknown> {
  const role = item.role === "developer" ? "system" : item.role;
  if (typeof item.content === "string") return { role, content: item.content };
  // Assistant turns (output_text parts) and system turns are text only in chat.
  if (role === "assistant" || role === "system") return { role, content: item.content.map((p: any) => p.text ?? "").join("") };
  return { role, content: item.content.map(part) };
}

export function responsesToChatRequest(body: any): ResponsesToChat {
  const dropped: string[] = [];
  const messages: any[] = [];
  if (typeof body.instructions === "string" && body.instructions) messages.push({ role: "system", content: body.instructions });
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  for (const item of input) {
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      if (last?.role === "assistant" && last.tool_calls) last.tool_calls.push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "reasoning") {
      // A reasoning item sent back from an earlier output: chat has no place for it (nothing to carry yet).
      continue;
    } else if (item.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
    } else {
      messages.push(messageOf(item));
    }
  }
  const out: Record<string, unknown> = { model: body.model, messages };
  if (typeof body.max_output_tokens === "number") out.max_completion_tokens = body.max_output_tokens;
  for (const k of ["temperature", "top_p", "parallel_tool_calls"] as const) if (body[k] !== undefined && body[k] !== null) out[k] = body[k];
  if (body.tools?.length) {
    out.tools = body.tools.map((t: any) => ({
      type: "function",
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters ?? { type: "object", properties: {} }, ...(typeof t.strict === "boolean" ? { strict: t.strict } : {}) },
    }));
  }
  if (body.tool_choice !== undefined) {
    out.tool_choice = typeof body.tool_choice === "string" ? body.tool_choice : { type: "function", function: { name: body.tool_choice.name } };
  }
  const format = body.text?.format;
  if (format?.type === "json_schema") {
    out.response_format = { type: "json_schema", json_schema: { name: format.name ?? "response", schema: format.schema, ...(format.description ? { description: format.description } : {}), ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}) } };
  } else if (format?.type === "json_object") {
    out.response_format = { type: "json_object" };
  }
  if (body.reasoning?.effort) out.reasoning_effort = body.reasoning.effort;
  if (body.reasoning?.summary) dropped.push("reasoning.summary");
  if (body.metadata) dropped.push("metadata");
  if (body.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // response.completed carries the final usage
  }
  // providerOptions stays: routing already used `gateway`; provider-namespaced knobs reach chat drivers that know them.
  if (body.providerOptions !== undefined) out.providerOptions = body.providerOptions;
  return { body: out, dropped };
}
