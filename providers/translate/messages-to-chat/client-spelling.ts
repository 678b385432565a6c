// A Messages client's names for the fields of the chat body made of its request (client-names.ts): what a chat step
// refuses or leaves out is named as this client sent it.
import type { ClientSpelling } from "../client-names.ts";

export const MESSAGES_SPELLING: ClientSpelling = {
  fields: {
    reasoning_effort: "thinking",
    response_format: "output_config.format",
    "response_format.json_schema.schema": "output_config.format.schema",
    stop: "stop_sequences",
    user: "metadata.user_id",
    parallel_tool_calls: "tool_choice.disable_parallel_tool_use",
  },
  lists: { messages: "messages", tools: "tools" },
  below(rest, from) {
    switch (from?.type) {
      case "image":
      case "document":
        // Chat's image_url / file part was made of the block's source (its url, for a URL source's).
        if (rest === ".image_url.url" && from.source?.type === "url") return ".source.url";
        return rest.startsWith(".image_url") || rest.startsWith(".file") ? ".source" : "";
      case "tool_result":
        return rest === ".tool_call_id" ? ".tool_use_id" : rest === ".content" ? ".content" : "";
      case "tool_use":
        return rest.startsWith(".function.arguments") ? ".input" : rest === ".function.name" ? ".name" : "";
    }
    if (from?.role !== undefined) return rest === ".content" ? ".content" : ""; // a message
    if (from?.name !== undefined) return rest.startsWith(".function.parameters") ? ".input_schema" : rest === ".function.name" ? ".name" : ""; // a tool
    return "";
  },
};
