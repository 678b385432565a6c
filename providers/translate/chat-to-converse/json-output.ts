// response_format on Converse for Claude (reference protocols-2 §2.9): Claude answers JSON through a tool whose input is
// the answer, as on Anthropic (chat-to-messages, same tool name and the same refusals), which works on every Claude
// Bedrock serves (outputConfig only on 4.5 and newer); the response translators give that input back as the message
// content. Alone it is forced; beside the client's tools it is one of the tools the model must call (request.ts), but
// for tool_choice "required", which asks for a call of the client's: then only theirs go, as on Anthropic.
// Other families get Bedrock's structured outputs instead (output-config.ts).
import { invalidRequest } from "../../../core/errors.ts";
import { JSON_TOOL } from "../chat-to-messages/request.ts";
import { jsonOutputSchema } from "../tool-input-schema.ts";

/** The JSON tool's toolSpec when `body` asks for JSON; undefined otherwise (a response_format left out is named). */
export function jsonOutputSpec(body: any, dropped: string[]): Record<string, unknown> | undefined {
  const rf = body.response_format;
  const jsonMode = rf?.type === "json_object" || rf?.type === "json_schema";
  if (!jsonMode) {
    // Plain text is what comes anyway: only a JSON ask goes unhonoured.
    if (rf !== undefined && rf !== null && rf !== false && rf?.type !== "text") dropped.push("response_format");
    return undefined;
  }
  // The same rules as on Anthropic (tool-input-schema.ts): a root $ref, no type, ["object","null"] or a root union of
  // objects is sent as one object schema; a root of another type is a 400 naming the schema.
  const schema = rf.type === "json_schema" ? jsonOutputSchema(rf.json_schema?.schema ?? { type: "object" }, "response_format.json_schema.schema") : { type: "object" };
  // The tool is not constrained decoding: a strict schema is followed as closely as the model does, not enforced.
  if (rf.json_schema?.strict === true) dropped.push("response_format.json_schema.strict");
  const description = rf.json_schema?.description ?? "Give the final answer as this tool's input, matching its schema.";
  return { name: JSON_TOOL, description, inputSchema: { json: schema } };
}

/** The client's tools go beside the JSON tool: none of them may take its name (its calls would come back as the answer). */
export function refuseJsonToolName(tools: any[]): void {
  if (tools.some((t: any) => t.function?.name === JSON_TOOL)) {
    throw invalidRequest(`a tool named ${JSON_TOOL} cannot go beside response_format on this model's provider: the JSON answer comes through a tool of that name`, "tools");
  }
}

/** Beside the client's tools the model must call one, or answer through the JSON tool; a client's forced function stays forced. */
export function besideToolsChoice(tc: any): Record<string, unknown> {
  return tc && typeof tc === "object" && tc.function?.name ? { tool: { name: tc.function.name } } : { any: {} };
}
