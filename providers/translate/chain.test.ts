import { describe, expect, it } from "vitest";
import type { Target } from "../../core/contracts/provider.ts";
import { responsesToConverse } from "./responses-to-converse/index.ts";
import { messagesToConverse } from "./messages-to-converse/index.ts";
import { responsesToMessages } from "./responses-to-messages/index.ts";

const llama: Target = { modelId: "meta/llama", provider: "bedrock", upstreamModel: "us.meta.llama3-3-70b-instruct-v1:0", pricing: {} };
const claude: Target = { modelId: "anthropic/claude", provider: "anthropic", upstreamModel: "claude-sonnet-4-5", pricing: {} };
const opts = (driverProtocol: string) => ({ cacheMarkers: true, cacheAuto: false, driverProtocol, provider: "p" });

describe("chained translators name what the inner half drops as the client sent it", () => {
  it("Responses clients: text.format, text.verbosity, top_logprobs (once), prompt_cache_key", () => {
    const body = {
      model: "m", input: "x", top_logprobs: 3, prompt_cache_key: "k",
      text: { verbosity: "low", format: { type: "json_schema", name: "o", schema: { type: "object", properties: {} } } },
    };
    const dropped = responsesToConverse.request(body, llama, opts("converse")).dropped;
    expect(dropped).toEqual(expect.arrayContaining(["text.format", "text.verbosity", "top_logprobs", "prompt_cache_key"]));
    expect(dropped).not.toContain("logprobs");
    expect(dropped).not.toContain("response_format");
    expect(new Set(dropped).size).toBe(dropped.length);
    expect(responsesToMessages.request(body, claude, opts("anthropic")).dropped).toContain("text.verbosity");
  });

  it("Messages clients: output_config.format, top_k", () => {
    const body = { model: "m", max_tokens: 100, top_k: 5, output_config: { format: { type: "json_schema", schema: { type: "object", properties: {} } } }, messages: [{ role: "user", content: "x" }] };
    const dropped = messagesToConverse.request(body, llama, opts("converse")).dropped;
    expect(dropped).toEqual(expect.arrayContaining(["top_k", "output_config.format"]));
    expect(dropped).not.toContain("response_format");
  });
});
