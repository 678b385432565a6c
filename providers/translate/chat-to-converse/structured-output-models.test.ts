// Which Converse models get outputConfig.textFormat: the families AWS lists, whatever the region prefix or ARN; the
// catalog's Nova and Llama models (not listed) do not.
import { describe, expect, it } from "vitest";
import { takesStructuredOutputs } from "./structured-output-models.ts";

describe("takesStructuredOutputs", () => {
  it.each([
    "openai.gpt-oss-120b-1:0", "openai.gpt-oss-safeguard-20b", "qwen.qwen3-235b-a22b-2507-v1:0", "us.qwen.qwen3-coder-480b-a35b-v1:0",
    "deepseek.v3-v1:0", "deepseek.v3.2", "mistral.mistral-large-3-675b-instruct", "mistral.ministral-3-8b-instruct",
    "mistral.magistral-small-2509", "google.gemma-3-27b-it", "nvidia.nemotron-nano-12b-v2", "minimax.minimax-m2",
    "moonshot.kimi-k2-thinking", "moonshotai.kimi-k2.5",
    "arn:aws:bedrock:us-west-2:123456789012:inference-profile/global.openai.gpt-oss-120b-1:0",
  ])("listed: %s", (id) => expect(takesStructuredOutputs(id)).toBe(true));

  it.each([
    "us.amazon.nova-pro-v1:0", "us.amazon.nova-lite-v1:0", "us.amazon.nova-micro-v1:0", "global.amazon.nova-2-lite-v1:0",
    "us.meta.llama3-3-70b-instruct-v1:0", "us.meta.llama4-maverick-17b-instruct-v1:0", "us.meta.llama4-scout-17b-instruct-v1:0",
    "deepseek.r1-v1:0", "mistral.mistral-large-2407-v1:0", "mistral.mixtral-8x7b-instruct-v0:1", "cohere.command-r-plus-v1:0",
    "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc123",
  ])("not listed: %s", (id) => expect(takesStructuredOutputs(id)).toBe(false));
});
