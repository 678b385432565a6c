// A Responses mcp request whose turns ran on different endpoints (a fallback within a turn): each turn billed at the
// endpoint that served it, as each provider bills it; not every turn at the last attempt's prices.
import { describe, expect, it } from "vitest";
import type { Target, Usage } from "../contracts/provider.ts";
import { requestCost } from "./turn-cost.ts";

const gemini = { provider: "gemini", pricing: { input: "0.00000125", output: "0.00001", long_context: { above_input_tokens: 200000, input: "0.0000025", output: "0.000015" } } } as Target;
const openai = { provider: "openai", pricing: { input: "0.000002", output: "0.000008" } } as Target;
const turn = (inputTokens: number): Usage => ({ inputTokens, outputTokens: 100 });

describe("requestCost of several turns", () => {
  it("turn 1 on Gemini (250k, at its long tier), turn 2 failed on every endpoint: Gemini's price, not OpenAI's", () => {
    // 250000 x 2.5e-6 + 100 x 1.5e-5, where OpenAI's prices said 0.5008
    expect(requestCost({ turnUsages: [turn(250_000)], turnTargets: [gemini] }, turn(250_000), openai).usd).toBe("0.6265");
  });

  it("turn 1 on Gemini, turn 2 on OpenAI after a fallback: each at its own", () => {
    // 0.1385 + 0.2208, where both at OpenAI's said 0.4416
    const cost = requestCost({ turnUsages: [turn(110_000), turn(110_000)], turnTargets: [gemini, openai] }, { inputTokens: 220_000, outputTokens: 200 }, openai);
    expect(cost.usd).toBe("0.3593");
    expect(cost.pico).toBe(359_300_000_000n);
  });

  it("what the bill holds beyond the turns (a cut turn's estimate) is at the endpoint the request ended on", () => {
    expect(requestCost({ turnUsages: [turn(110_000)], turnTargets: [gemini] }, { inputTokens: 220_000, outputTokens: 200 }, openai).usd).toBe("0.3593");
  });

  it("turns capped by the bill are billed at most as it says; every turn on one endpoint: as before", () => {
    // A turn reported over the threshold (if absurdly): its tier applies to the 1000 tokens billed of it, as for two turns.
    expect(requestCost({ turnUsages: [turn(1e12)], turnTargets: [gemini] }, turn(1000), openai).usd).toBe("0.004");
    expect(requestCost({ turnUsages: [turn(110_000), turn(110_000)], turnTargets: [gemini, gemini] }, { inputTokens: 220_000, outputTokens: 200 }, gemini).usd).toBe("0.277");
  });
});
