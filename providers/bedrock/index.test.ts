// Whether the call the Bedrock driver builds carries the context-1m beta (ProviderDriver.opensLongContext): InvokeModel
// reads betas from the body's anthropic_beta. Claude Sonnet's 1M window, and its billing, follow it.
import { afterAll, describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, Target } from "../../core/contracts/provider.ts";
import { createBedrockDriver } from "./index.ts";

const drivers: ProviderDriver[] = [];
const made = <D extends ProviderDriver>(d: D) => (drivers.push(d), d);
afterAll(async () => { await Promise.all(drivers.map((d) => d.close?.())); });

const SETTINGS = { timeoutMs: 1000 };
const target = (upstreamModel: string) => ({ modelId: "anthropic/claude-sonnet-4.5", provider: "p", upstreamModel, pricing: {} }) as Target;
const BETA = "context-1m-2025-08-07";
const none = { clientHeaders: {} };

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

  it("Converse, and a model that is not Claude, never", () => {
    expect(viaConverse.opensLongContext!(claude, { body: { anthropic_beta: [BETA] }, clientHeaders: { "anthropic-beta": BETA } })).toBe(false);
    expect(invoke.opensLongContext!(target("meta.llama3-70b-instruct-v1:0"), { body: { anthropic_beta: [BETA] }, clientHeaders: {} })).toBe(false);
  });
});

