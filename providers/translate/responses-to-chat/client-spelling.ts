// A Responses client's names for the fields of the chat body made of its request (client-names.ts): what a chat step
// refuses or leaves out is named as this client sent it (verbosity is text.verbosity, messages[1] may be input[0]).
import type { ClientSpelling } from "../client-names.ts";
import { isWebSearch } from "./tools.ts";

const LOGPROBS = "message.output_text.logprobs";

export const RESPONSES_SPELLING: ClientSpelling = {
  fields: {
    reasoning_effort: "reasoning.effort",
    response_format: "text.format",
    "response_format.json_schema.schema": "text.format.schema",
    "response_format.json_schema.strict": "text.format.strict",
    verbosity: "text.verbosity",
    max_completion_tokens: "max_output_tokens",
    user: (c) => (typeof c?.safety_identifier === "string" ? "safety_identifier" : "user"),
    // chat's flag the gateway sets for either way of asking
    logprobs: (c) => (Array.isArray(c?.include) && c.include.includes(LOGPROBS) ? `include.${LOGPROBS}` : "top_logprobs"),
    // the web search tool it was made of (the last one: responses-to-chat/tools.ts keeps that one)
    web_search_options: (c) => {
      const at = Array.isArray(c?.tools) ? c.tools.findLastIndex((t: any) => isWebSearch(t?.type) && t.external_web_access !== false) : -1;
      return at === -1 ? "tools" : `tools[${at}]`;
    },
  },
  lists: { messages: "input", tools: "tools" },
  below(rest, from) {
    switch (from?.type) {
      case "input_image":
        return rest.startsWith(".image_url") ? ".image_url" : "";
      case "input_file":
        if (rest.startsWith(".image_url")) return ".file_url"; // a file URL travels as an image_url part
        return rest.startsWith(".file") && from.file_data !== undefined ? ".file_data" : "";
      case "function_call":
        return rest.startsWith(".function.arguments") ? ".arguments" : rest === ".function.name" ? ".name" : rest === ".id" ? ".call_id" : "";
      case "function_call_output":
        return rest === ".tool_call_id" ? ".call_id" : rest === ".content" ? ".output" : "";
      case "function": // a tool
        return rest.startsWith(".function.parameters") ? ".parameters" : rest === ".function.name" ? ".name" : "";
    }
    if (from?.role !== undefined) return rest === ".content" ? ".content" : ""; // a message item
    return "";
  },
};
