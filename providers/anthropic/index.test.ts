// Whether the call the Anthropic driver builds carries the context-1m beta (ProviderDriver.opensLongContext): Claude
// Sonnet's 1M window, and its billing, follow it.
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { closedAfterAll, DRIVER_SETTINGS as SETTINGS, LONG_CONTEXT_BETA as BETA, NO_CLIENT_HEADERS as none, sonnetTarget as target } from "../long-context-driver.testkit.ts";
import { createAnthropicDriver } from "./index.ts";

const made = closedAfterAll();

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

