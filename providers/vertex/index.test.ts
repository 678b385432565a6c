// Whether the call the Vertex driver builds for Claude carries the context-1m beta (ProviderDriver.opensLongContext):
// Claude Sonnet's 1M window, and its billing, follow it.
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { closedAfterAll, DRIVER_SETTINGS as SETTINGS, LONG_CONTEXT_BETA as BETA, NO_CLIENT_HEADERS as none, sonnetTarget as target } from "../long-context-driver.testkit.ts";
import { createVertexDriver } from "./index.ts";

const made = closedAfterAll();

describe("Claude on Vertex AI", () => {
  const plain = made(createVertexDriver("v", { protocol: "vertex", api_key: "tok", project_id: "p", region: "global" } as ProviderConfig, SETTINGS));
  const everyone = made(createVertexDriver("w", { protocol: "vertex", api_key: "tok", project_id: "p", region: "global", headers: { "anthropic-beta": BETA } } as ProviderConfig, SETTINGS));
  const claude = target("claude-sonnet-4-5@20250929");

  it("the client's header or the provider's configured one opens it; a Gemini model never", () => {
    expect(plain.opensLongContext!(claude, { clientHeaders: { "anthropic-beta": BETA } })).toBe(true);
    expect(plain.opensLongContext!(claude, none)).toBe(false);
    expect(everyone.opensLongContext!(claude, none)).toBe(true);
    expect(everyone.opensLongContext!(target("gemini-2.5-pro"), none)).toBe(false);
  });

  it("a client sending betas of its own keeps the configured one (they are added, not put in its place)", () => {
    expect(everyone.opensLongContext!(claude, { clientHeaders: { "anthropic-beta": "files-api-2025-04-14" } })).toBe(true);
  });
});
