// A Gemini client's names for the fields of the chat body made of its request (client-names.ts): what a chat step
// refuses or leaves out is named as this client sent it (n > 1 is generationConfig.candidateCount). Fields without a
// Gemini counterpart keep their chat name.
import type { ClientSpelling } from "../client-names.ts";

export const GEMINI_SPELLING: ClientSpelling = {
  fields: {
    n: "generationConfig.candidateCount",
    temperature: "generationConfig.temperature",
    top_p: "generationConfig.topP",
    max_tokens: "generationConfig.maxOutputTokens",
    stop: "generationConfig.stopSequences",
    seed: "generationConfig.seed",
    presence_penalty: "generationConfig.presencePenalty",
    frequency_penalty: "generationConfig.frequencyPenalty",
    response_format: "generationConfig.responseMimeType",
    "response_format.json_schema.schema": (c) => (c?.generationConfig?.responseJsonSchema !== undefined ? "generationConfig.responseJsonSchema" : "generationConfig.responseSchema"),
    reasoning_effort: "generationConfig.thinkingConfig",
    tool_choice: "toolConfig",
  },
  lists: { messages: "contents", tools: "tools" },
  below(rest, from) {
    if (from?.inlineData) return rest.startsWith(".image_url") || rest.startsWith(".file") || rest.startsWith(".input_audio") ? ".inlineData" : "";
    if (from?.fileData) return rest.startsWith(".image_url") ? ".fileData.fileUri" : "";
    if (from?.functionCall) return rest.startsWith(".function.arguments") ? ".functionCall.args" : rest === ".function.name" ? ".functionCall.name" : "";
    if (from?.functionResponse) return rest === ".tool_call_id" ? ".functionResponse" : rest === ".content" ? ".functionResponse.response" : "";
    if (Array.isArray(from?.parts) || from?.role !== undefined) return rest === ".content" ? ".parts" : ""; // a content (turn)
    if (typeof from?.name === "string") { // a function declaration
      if (rest.startsWith(".function.parameters")) return from.parametersJsonSchema !== undefined ? ".parametersJsonSchema" : ".parameters";
      return rest === ".function.name" ? ".name" : "";
    }
    return "";
  },
};
