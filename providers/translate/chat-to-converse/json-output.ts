// response_format on Converse (reference protocols-2 §2.9): Claude answers JSON through one forced tool whose input is
// the answer, as on Anthropic (chat-to-messages, same tool name and the same refusals), which works on every Claude
// Bedrock serves; the response translators give that input back as the message content. Other families have no JSON
// mode the gateway asks of Converse: response_format is dropped there, named.
import { invalidRequest } from "../../../core/errors.ts";
import type { Target } from "../../../core/contracts/provider.ts";
import { isConverseClaude } from "../../../core/metering/output-limit.ts";
import { JSON_TOOL } from "../chat-to-messages/request.ts";
import { jsonOutputSchema } from "../tool-input-schema.ts";

/** The forced tool's toolSpec when `body` asks Claude for JSON; undefined otherwise (a response_format left out is named). */
export function jsonOutputSpec(body: any, target: Target, dropped: string[]): Record<string, unknown> | undefined {
  const rf = body.response_format;
  const jsonMode = rf?.type === "json_object" || rf?.type === "json_schema";
  if (!jsonMode || !isConverseClaude(target.upstreamModel)) {
    // Plain text is what comes anyway: only a JSON ask goes unhonoured.
    if (rf !== undefined && rf !== null && rf !== false && rf?.type !== "text") dropped.push("response_format");
    return undefined;
  }
  if (Array.isArray(body.tools) && body.tools.length && body.tool_choice !== "none") {
    throw invalidRequest("response_format together with tools is not supported by this model's provider", "response_format");
  }
  // The same rules as on Anthropic (tool-input-schema.ts): a root $ref, no type, ["object","null"] or a root union of
  // objects is sent as one object schema; a root of another type is a 400 naming the schema.
  const schema = rf.type === "json_schema" ? jsonOutputSchema(rf.json_schema?.schema ?? { type: "object" }, "response_format.json_schema.schema") : { type: "object" };
  // The forced tool is not constrained decoding: a strict schema is followed as closely as the model does, not enforced.
  if (rf.json_schema?.strict === true) dropped.push("response_format.json_schema.strict");
  const description = rf.json_schema?.description ?? "Give the final answer as this tool's input, matching its schema.";
  return { name: JSON_TOOL, description, inputSchema: { json: schema } };
}
