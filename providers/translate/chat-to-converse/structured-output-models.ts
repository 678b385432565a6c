// Which Converse models take Bedrock's structured outputs (outputConfig.textFormat). AWS offers it on select models
// only, and a model without it refuses the request with a 400 ValidationException, which would end a fallback chain
// whose Bedrock endpoint answered before: those models keep response_format dropped and named (output-config.ts).
// Source: AWS's user guide "Get validated JSON results from models", section Supported models
// (https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html#structured-output-supported-models):
// Claude Haiku/Sonnet/Opus 4.5 and Opus 4.6, and select open-weight models (Qwen, DeepSeek, Mistral, Google Gemma,
// NVIDIA Nemotron, MiniMax, Moonshot Kimi, OpenAI gpt-oss); the model ids per family as models.dev's copy of that
// list has them (anomalyco/models.dev, providers/amazon-bedrock, structured_output, updated 2026-05 with Z.ai GLM 4.7
// and 5). Not on it: Amazon Nova, Meta Llama 3 and 4, DeepSeek-R1, the older Mistral models (Large 2402/2407, Small
// 2402, Mixtral, Mistral 7B, Pixtral).
// Claude is not asked here: its JSON goes through the json_output tool (json-output.ts), which every Claude takes.

/** Model id prefixes (after any region prefix such as `us.` or an ARN's path) that AWS lists. */
const SUPPORTED = [
  "openai.gpt-oss-", // gpt-oss 20b/120b, safeguard included
  "qwen.qwen3", // Qwen3 32B, 235B 2507, Coder 30B/480B, Next 80B, VL 235B, Coder Next
  "deepseek.v3", // DeepSeek-V3.1 (deepseek.v3-v1:0), V3.2; not R1
  "mistral.mistral-large-3-",
  "mistral.ministral-3-",
  "mistral.magistral-small-",
  "mistral.devstral-2-",
  "mistral.voxtral-",
  "google.gemma-3-12b",
  "google.gemma-3-27b",
  "nvidia.nemotron-",
  "minimax.minimax-m2",
  "moonshot.kimi-",
  "moonshotai.kimi-",
  "zai.glm-4.7",
  "zai.glm-5",
];

/** Whether Bedrock takes outputConfig.textFormat for this upstream model id (inference profile or ARN included). */
export function takesStructuredOutputs(upstreamModel: string): boolean {
  const id = upstreamModel.slice(upstreamModel.lastIndexOf("/") + 1);
  return SUPPORTED.some((p) => id.startsWith(p) || id.includes(`.${p}`));
}
