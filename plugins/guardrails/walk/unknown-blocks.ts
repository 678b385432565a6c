// Messages content blocks of a type the gateway does not know (the SDK's betas: compaction, tool_reference, made-up
// types) pass between client and Claude as they are, in requests and in answers, so every string in one is text a
// reader sees: both walks read such a block whole, where known blocks keep their exact handling.
import { visitJsonValue, type Visit } from "./json-text.ts";

/**
 * Block types the Messages schema knows and checks (messages.schema.json, OtherContentBlock and OtherNestedBlock): at
 * the top of a turn or an answer, and inside a tool result or a content document. Any other type passes unchecked.
 */
export const KNOWN_MESSAGES_BLOCKS: ReadonlySet<string> = new Set([
  "text", "image", "document", "search_result", "tool_use", "tool_result", "thinking", "redacted_thinking",
  "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
  "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
  "mcp_tool_use", "mcp_tool_result", "container_upload",
]);
export const KNOWN_NESTED_BLOCKS: ReadonlySet<string> = new Set(["text", "image", "document", "search_result"]);

/**
 * A block (or a streamed delta) of a type the gateway does not know: every string value in it but its `type` tag (a
 * name the reader must know, not text), at any depth, iteratively (bounded by the body's size), written back in place.
 */
export function unknownBlockStrings(b: Record<string, any>, visit: Visit): void {
  for (const k of Object.keys(b)) {
    if (k === "type") continue;
    const v = b[k];
    if (typeof v === "string") {
      const n = visit(v);
      if (n !== v) b[k] = n;
    } else visitJsonValue(v, visit);
  }
}
