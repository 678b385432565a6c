// A retired endpoint (retires: YYYY-MM-DD, core/config/retirement.ts) is sent nothing, so a budget hold priced at it
// would refuse a request only its live endpoints can serve.
import { afterEach, describe, expect, it, vi } from "vitest";
import { worstCasePico } from "./worst-case.ts";
import { picoToUsd } from "../../core/money/money.ts";
import { retirementInstants } from "../../core/config/retirement.ts";
import type { ModelConfig } from "../../core/generated/types/gateway.ts";
import type { GatewayContext } from "../../core/pipeline/context.ts";

const DAY = Date.UTC(2026, 10, 1);
const endpoints: ModelConfig["endpoints"] = [
  { provider: "anthropic", model: "claude-dear-old", retires: "2026-11-01", pricing: { input: "0.001", output: "0.1" }, max_tokens: 8192 },
  { provider: "anthropic", model: "claude-dear-new", pricing: { input: "0.000003", output: "0.000015" }, max_tokens: 8192 },
];
const model = {
  id: "acme/dear", type: "language", config: { endpoints, context_window: 200_000 }, retiresAt: retirementInstants(endpoints),
  endpoints: endpoints.map((ep) => ({ provider: ep.provider, upstreamModel: ep.model, pricing: ep.pricing!, maxTokens: 8192, contextWindow: 200_000 })),
};
const ctx = (body: unknown) =>
  ({ endpoint: "chat", body, headers: { "content-length": "100" }, config: { models: new Map([["acme/dear", model]]), raw: {} } }) as unknown as GatewayContext;
const worst = () => picoToUsd(worstCasePico(ctx({ model: "acme/dear", max_tokens: 2000, messages: [{ role: "user", content: "Hi" }] })));

afterEach(() => vi.useRealTimers());

describe("worst case with a retired endpoint", () => {
  it("is priced at the retiring endpoint the day before, and only at the live one from 00:00 UTC that day", () => {
    vi.useFakeTimers({ toFake: ["Date"], now: DAY - 1 });
    expect(worst()).toBe("200.1"); // 100 * 0.001 + 2000 * 0.1
    vi.setSystemTime(DAY);
    expect(worst()).toBe("0.0303"); // 100 * 0.000003 + 2000 * 0.000015
  });
});
