// Whether the call the Anthropic driver builds carries the context-1m beta (ProviderDriver.opensLongContext): Claude
// Sonnet's 1M window, and its billing, follow it.
import { afterAll, describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { ProviderDriver, Target } from "../../core/contracts/provider.ts";
import { createAnthropicDriver } from "./index.ts";

const drivers: ProviderDriver[] = [];
const made = <D extends ProviderDriver>(d: D) => (drivers.push(d), d);
afterAll(async () => { await Promise.all(drivers.map((d) => d.close?.())); });

const SETTINGS = { timeoutMs: 1000 };
const target = (upstreamModel: string) => ({ modelId: "anthropic/claude-sonnet-4.5", provider: "p", upstreamModel, pricing: {} }) as Target;
const BETA = "context-1m-2025-08-07";
const none = { clientHeaders: {} };

describe("Anthropic's API", () => {
  const plain = made(createAnthropicDriver("a", { protocol: "anthropic", api_key: "k" } as ProviderConfig, SETTINGS));
  const everyone = made(createAnthropicDriver("b", { protocol: "anthropic", api_key: "k", headers: { "anthropic-beta": BETA } } as ProviderConfig, SETTINGS));
  const sonnet = target("claude-sonnet-4-5");

  it("the client's header opens it; nothing else the client sends does (the API reads betas from the header)", () => {
    expect(plain.opensLongContext!(sonnet, { clientHeaders: { "anthropic-beta": BETA } })).toBe(true);
    expect(plain.opensLongContext!(sonnet, { body: { anthropic_beta: [BETA] }, clientHeaders: {} })).toBe(false);
    expect(plain.opensLongContext!(sonnet, none)).toBe(false);
  });

  it("a provider configured with the beta opens it on every call, a translated one (no client headers) too", () => {
    expect(everyone.opensLongContext!(sonnet, none)).toBe(true);
    expect(everyone.opensLongContext!(sonnet, { body: {}, clientHeaders: {} })).toBe(true);
  });
});

