// Anthropic and Bedrock Converse refuse text blocks that are empty or whitespace only ("text content blocks must
// contain non-whitespace text", "The text field in the ContentBlock object … is blank"), and Claude refuses a final
// assistant turn (prefill) ending in whitespace. The chat translators to both drop blank text; a last user turn that
// held nothing else is refused, naming it, when dropping it would leave an assistant turn last (the upstream would
// read it as a prefill to continue, not a turn to answer) or no turn at all. Blank system text is left out; a tool
// result whose text is blank still answers its call, its content EMPTY_RESULT where the upstream wants some.
import { invalidRequest, type GatewayError } from "../../core/errors.ts";

export const isBlank = (text: unknown): boolean => typeof text !== "string" || text.trim() === "";

/** A blank tool result's text where one is required (Converse's toolResult, Anthropic's error tool_result). */
export const EMPTY_RESULT = "(empty)";

export function blankLastTurn(i: number): GatewayError {
  return invalidRequest("the last message has no content (empty or whitespace-only text), which this model's provider refuses", `messages[${i}].content`);
}
