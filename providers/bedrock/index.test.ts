// Whether the call the Bedrock driver builds carries the context-1m beta (ProviderDriver.opensLongContext): InvokeModel
// reads betas from the body's anthropic_beta (the client's, and the provider's configured anthropic-beta moved there),
// Converse from additionalModelRequestFields.anthropic_beta (the configured one moved there).
// Claude Sonnet's 1M window, and its billing, follow it.
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { closedAfterAll, DRIVER_SETTINGS as SETTINGS, LONG_CONTEXT_BETA as BETA, NO_CLIENT_HEADERS as none, sonnetTarget as target } from "../long-context-driver.testkit.ts";
import { createBedrockDriver } from "./index.ts";

const made = closedAfterAll();

describe("Bedrock", () => {
  const keys = { region: "us-east-1", aws_access_key_id: "AKIAFAKE", aws_secret_access_key: "x" };
  const invoke = made(createBedrockDriver("br", { protocol: "bedrock", ...keys } as ProviderConfig, SETTINGS, {}));
  const viaConverse = made(createBedrockDriver("bc", { protocol: "bedrock", bedrock_claude_api: "converse", ...keys } as ProviderConfig, SETTINGS, {}));
  const claude = target("us.anthropic.claude-sonnet-4-5-20250929-v1:0");

  it("InvokeModel: the body's anthropic_beta (passed through) or the client's header (moved into it) opens it", () => {
    expect(invoke.opensLongContext!(claude, { body: { anthropic_beta: [BETA] }, clientHeaders: {} })).toBe(true);
    expect(invoke.opensLongContext!(claude, { body: {}, clientHeaders: { "anthropic-beta": BETA } })).toBe(true);
    expect(invoke.opensLongContext!(claude, { body: { anthropic_beta: ["token-efficient-tools-2025-02-19"] }, clientHeaders: {} })).toBe(false);
    expect(invoke.opensLongContext!(claude, none)).toBe(false);
  });

  it("InvokeModel: a beta in the provider's configured headers (moved into the body) opens it, for every client", () => {
    const configured = made(createBedrockDriver("bh", { protocol: "bedrock", ...keys, headers: { "anthropic-beta": BETA } } as ProviderConfig, SETTINGS, {}));
    expect(configured.opensLongContext!(claude, none)).toBe(true);
    expect(configured.opensLongContext!(claude, { body: {}, clientHeaders: { "anthropic-beta": "interleaved-thinking-2025-05-14" } })).toBe(true);
    // A configured beta Bedrock does not accept is not sent, and opens nothing.
    const other = made(createBedrockDriver("bo", { protocol: "bedrock", ...keys, headers: { "anthropic-beta": "files-api-2025-04-14" } } as ProviderConfig, SETTINGS, {}));
    expect(other.opensLongContext!(claude, none)).toBe(false);
  });

  it("Converse: the provider's configured beta (sent in additionalModelRequestFields.anthropic_beta) opens it, for every client", () => {
    const configured = made(createBedrockDriver("bch", { protocol: "bedrock", bedrock_claude_api: "converse", ...keys, headers: { "Anthropic-Beta": BETA } } as ProviderConfig, SETTINGS, {}));
    expect(configured.opensLongContext!(claude, none)).toBe(true);
    expect(configured.opensLongContext!(target("meta.llama3-70b-instruct-v1:0"), none)).toBe(false);
    const other = made(createBedrockDriver("bco", { protocol: "bedrock", bedrock_claude_api: "converse", ...keys, headers: { "anthropic-beta": "files-api-2025-04-14" } } as ProviderConfig, SETTINGS, {}));
    expect(other.opensLongContext!(claude, none)).toBe(false);
  });

  it("Converse without a configured beta, and a model that is not Claude, never (a client's own beta is not on a translated call)", () => {
    expect(viaConverse.opensLongContext!(claude, { body: { anthropic_beta: [BETA] }, clientHeaders: { "anthropic-beta": BETA } })).toBe(false);
    expect(invoke.opensLongContext!(target("meta.llama3-70b-instruct-v1:0"), { body: { anthropic_beta: [BETA] }, clientHeaders: {} })).toBe(false);
  });
});

