import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { genAiProviderOf, mayObjectArguments, refusesUnknownFields, stopLimitOf, toolIdRuleOf } from "./host-conventions.ts";
import { createOpenAIDriver } from "./index.ts";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";

const shipped: Record<string, ProviderConfig> = YAML.parse(readFileSync(new URL("../../gateway.yaml", import.meta.url), "utf8")).providers;
const base = (p: ProviderConfig) => p.base_url ?? "https://api.openai.com/v1";

describe("host conventions of the shipped gateway.yaml's providers", () => {
  it("the stop limit is OpenAI's and Groq's 4; the other OpenAI-protocol hosts get stops as sent", () => {
    const limits = Object.fromEntries(Object.entries(shipped).filter(([, p]) => p.protocol === "openai").map(([name, p]) => [name, stopLimitOf(p, base(p))]));
    expect(limits).toMatchObject({ openai: 4, groq: 4, mistral: undefined, deepseek: undefined, xai: undefined, fireworks: undefined });
  });

  it("only Mistral refuses fields it does not know; a provider's setting overrides the host", () => {
    const strict = Object.entries(shipped).filter(([, p]) => p.protocol === "openai" && refusesUnknownFields(p, base(p))).map(([name]) => name);
    expect(strict).toEqual(["mistral"]);
    expect(refusesUnknownFields({ ...shipped.mistral!, unknown_fields: "ignored" }, shipped.mistral!.base_url!)).toBe(false);
    expect(refusesUnknownFields({ protocol: "openai", reasoning_field: "none" }, "http://127.0.0.1:8000/v1")).toBe(false);
  });

  it("tool-call arguments are looked for as objects on unknown hosts only (a self-hosted server), not on OpenAI or Azure", () => {
    expect(mayObjectArguments({ protocol: "openai" }, "https://api.openai.com/v1")).toBe(false);
    expect(mayObjectArguments({ protocol: "openai", flavor: "azure" }, "https://llm.corp.example")).toBe(false);
    expect(mayObjectArguments({ protocol: "openai" }, "http://127.0.0.1:11434/v1")).toBe(true);
  });

  it("Azure OpenAI by its flavor (a custom domain) or its host; max_stop_sequences overrides", () => {
    expect(stopLimitOf({ protocol: "openai", flavor: "azure" }, "https://llm.corp.example")).toBe(4);
    expect(stopLimitOf({ protocol: "openai" }, "https://res.openai.azure.com/openai/v1")).toBe(4);
    expect(stopLimitOf({ protocol: "openai", max_stop_sequences: 8 }, "https://api.openai.com/v1")).toBe(8);
    expect(stopLimitOf({ protocol: "openai" }, "https://api.openai.com.evil.example/v1")).toBeUndefined();
  });

  it("traces name the host, not the protocol they share (GenAI semconv gen_ai.provider.name)", () => {
    const names = Object.fromEntries(Object.entries(shipped).filter(([, p]) => p.protocol === "openai").map(([name, p]) => [name, createOpenAIDriver(name, p, { timeoutMs: 1000 }).genAiProvider]));
    expect(names).toMatchObject({ openai: undefined, groq: "groq", mistral: "mistral_ai", deepseek: "deepseek", xai: "x_ai" });
    expect(genAiProviderOf({ protocol: "openai", flavor: "azure" }, "https://gw.internal/azure")).toBe("azure.ai.openai");
    expect(genAiProviderOf({ protocol: "openai" }, "https://res.openai.azure.com/openai/v1")).toBe("azure.ai.openai");
    expect(genAiProviderOf({ protocol: "openai" }, "http://127.0.0.1:8000/v1")).toBeUndefined();
  });
});

describe("tool-call ids each shipped provider's host takes", () => {
  it("Mistral's 9 letters or digits for the shipped mistral (api.mistral.ai) and any provider on that host; OpenAI's lengths for OpenAI and Azure", () => {
    const rules = Object.fromEntries(Object.entries(shipped).filter(([, p]) => p.protocol === "openai").map(([name, p]) => [name, toolIdRuleOf(p, base(p))]));
    expect(rules).toMatchObject({ openai: "openai", mistral: "mistral", groq: "passthrough", deepseek: "passthrough", xai: "passthrough" });
    expect(toolIdRuleOf({ protocol: "openai", base_url: "https://api.mistral.ai/v1/" }, "https://api.mistral.ai/v1/")).toBe("mistral");
    expect(toolIdRuleOf({ protocol: "openai" }, "https://codestral.mistral.ai/v1")).toBe("mistral"); // Codestral's endpoint: the same API
    expect(refusesUnknownFields({ protocol: "openai" }, "https://codestral.mistral.ai/v1")).toBe(true);
    expect(toolIdRuleOf({ protocol: "openai" }, "https://notmistral.ai/v1")).toBe("passthrough");
    expect(toolIdRuleOf({ protocol: "openai", flavor: "azure" }, "https://llm.corp.example")).toBe("openai");
    expect(toolIdRuleOf({ protocol: "openai", tool_call_ids: "passthrough" }, "https://api.mistral.ai/v1")).toBe("passthrough");
  });
});
