// A budget's reservation for a model with a long-prompt tier (pricing.long_context): a request whose estimated prompt
// is over the threshold is held at the tier's prices, so its settled cost (billed at them) never exceeds the hold.
import { describe, expect, it } from "vitest";
import type { GatewayContext } from "../../core/pipeline/context.ts";
import { picoToUsd } from "../../core/money/money.ts";
import { worstCase } from "./worst-case.ts";

// Input $1 / output $2 per million, and $2 / $3 over 1000 prompt tokens; a 100 000-token window.
const TIERED = { input: "0.000001", output: "0.000002", long_context: { above_input_tokens: 1000, input: "0.000002", output: "0.000003" } };

function ctx(body: unknown, bodyBytes: number): GatewayContext {
  const models = new Map<string, unknown>([
    ["g/pro", { id: "g/pro", type: "language", config: {}, endpoints: [{ provider: "p", upstreamModel: "pro", pricing: TIERED, maxTokens: 100, contextWindow: 100_000 }] }],
  ]);
  return { endpoint: "chat", body, headers: { "content-length": String(bodyBytes) }, config: { models, raw: {} } } as unknown as GatewayContext;
}

const reserved = (c: GatewayContext) => picoToUsd(worstCase(c).pico);

describe("the budget's worst case with a long-prompt tier", () => {
  it("a body of up to the threshold's size is held at the base prices", () => {
    // 1000 tokens x 0.000001 + 10 x 0.000002
    expect(reserved(ctx({ model: "g/pro", max_tokens: 10 }, 1000))).toBe("0.00102");
  });

  it("a body over the threshold is held at the tier's prices, input and output", () => {
    // 1001 tokens x 0.000002 + 10 x 0.000003
    expect(reserved(ctx({ model: "g/pro", max_tokens: 10 }, 1001))).toBe("0.002032");
    expect(worstCase(ctx({ model: "g/pro", max_tokens: 10 }, 1001)).withoutOutputPico).toBe(2_002_000_000n);
  });

  it("an input only the context window bounds (a stored conversation) is held at the tier's prices", () => {
    // 100 000 tokens x 0.000002 + 10 x 0.000003
    expect(reserved({ ...ctx({ model: "g/pro", max_output_tokens: 10, previous_response_id: "resp_1", input: "Hi" }, 80), endpoint: "responses" } as GatewayContext)).toBe("0.20003");
  });
});
