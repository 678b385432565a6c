import { describe, expect, it } from "vitest";
import type { Target } from "../../../core/contracts/provider.ts";
import { chatToMessages } from "./index.ts";

const at = (provider: string, upstreamModel: string): Target => ({ modelId: `x/${upstreamModel}`, provider, upstreamModel, pricing: { output: "0.00001" } });
const body = { model: "x", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://img.example.com/a.png" } }] }] };
const refusal = (driverProtocol: string, target: Target) => {
  try {
    chatToMessages.request(body, target, { cacheMarkers: false, cacheAuto: false, driverProtocol, provider: target.provider });
  } catch (e) {
    return e as { message: string; details: Record<string, unknown> };
  }
  throw new Error("not refused");
};

describe("a plain http image URL in the Messages translation", () => {
  it("for a Claude model (Anthropic, Bedrock, Vertex) is refused in Anthropic's words", () => {
    for (const [protocol, target] of [["anthropic", at("ant", "claude-sonnet-4-5")], ["bedrock", at("br", "anthropic.claude-3-5-sonnet")], ["vertex", at("vx", "claude-opus-4")]] as const) {
      expect(refusal(protocol, target).message, protocol).toBe("messages[0].content[0].image_url.url: Anthropic fetches only https image URLs; send an https URL or a base64 data URL");
    }
  });

  it("for another model, whose count body this is, names the provider counted for", () => {
    for (const [protocol, target] of [["gemini", at("gem", "gemini-2.5-flash")], ["vertex", at("vx", "gemini-2.5-pro")], ["openai", at("oai", "gpt-4o")]] as const) {
      const e = refusal(protocol, target);
      expect(e.message, protocol).toBe(`messages[0].content[0].image_url.url: counting tokens for provider "${target.provider}" takes only https image URLs; send an https URL or a base64 data URL`);
      expect(e.details).toEqual({ field: "messages[0].content[0].image_url.url", reason: "not_https" });
    }
  });
});
