// Rate-limit's output estimate (requestedOutput) is judged on the endpoints a request can be sent to: a retired one
// (retires: YYYY-MM-DD) would reserve its larger output limit against the key's tpm for nothing.
import { afterEach, describe, expect, it, vi } from "vitest";
import { requestedOutput } from "./request-size.ts";
import { retirementInstants } from "../config/retirement.ts";
import type { ModelConfig } from "../generated/types/gateway.ts";
import type { GatewayContext } from "../pipeline/context.ts";

const DAY = Date.UTC(2026, 10, 30);
const endpoints: ModelConfig["endpoints"] = [
  { provider: "anthropic", model: "claude-old", retires: "2026-11-30", max_tokens: 64_000 },
  { provider: "vertex", model: "claude-old@1", max_tokens: 8192 },
];
const model = {
  id: "acme/old", type: "language", config: { endpoints }, retiresAt: retirementInstants(endpoints),
  endpoints: endpoints.map((ep) => ({ provider: ep.provider, upstreamModel: ep.model, pricing: {}, maxTokens: ep.max_tokens })),
};
// A chat request stating no max_tokens: each endpoint is asked for its own maximum.
const ctx = { endpoint: "chat", body: { model: "acme/old", messages: [{ role: "user", content: "Hi" }] }, headers: {},
  config: { models: new Map([["acme/old", model]]), raw: {} } } as unknown as GatewayContext;

afterEach(() => vi.useRealTimers());

describe("requestedOutput with a retired endpoint", () => {
  it("counts the retiring endpoint's limit the day before, and only the live endpoint's from that day", () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY - 1 });
    expect(requestedOutput(ctx)).toBe(64_000);
    vi.setSystemTime(DAY);
    expect(requestedOutput(ctx)).toBe(8192);
  });
});
