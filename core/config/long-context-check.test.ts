// What `check` (and start, and a reload) says of a long-prompt price tier (pricing.long_context): a valid one loads;
// a threshold that is no positive whole number of tokens, or a tier price that is no decimal string, is named.
import { describe, expect, it } from "vitest";
import { problems } from "./config.testkit.ts";

const tier = (t: string) => `models:\n  g/pro: { endpoints: [{ provider: sim, model: m, pricing: { input: "0.00000125", output: "0.00001", long_context: ${t} } }] }\n`;

describe("pricing.long_context in check", () => {
  it("a threshold with tier prices loads", async () => {
    expect(await problems(tier(`{ above_input_tokens: 200000, input: "0.0000025", output: "0.000015", input_cache_read: "0.00000025" }`))).toEqual([]);
  });

  it("a threshold of zero, a fraction or missing is named", async () => {
    expect(await problems(tier(`{ above_input_tokens: 0, input: "0.0000025" }`))).toEqual([
      expect.stringMatching(/^F:2:\d+: models\.g\/pro\.endpoints\.0\.pricing\.long_context\.above_input_tokens: must be >= 1$/),
    ]);
    expect(await problems(tier(`{ above_input_tokens: 1.5, input: "0.0000025" }`))).toEqual([
      expect.stringMatching(/^F:2:\d+: models\.g\/pro\.endpoints\.0\.pricing\.long_context\.above_input_tokens: must be integer$/),
    ]);
    expect(await problems(tier(`{ input: "0.0000025" }`))).toEqual([
      expect.stringMatching(/^F:2:\d+: models\.g\/pro\.endpoints\.0\.pricing\.long_context: missing required field "above_input_tokens"$/),
    ]);
  });

  it("a tier price written as a number or with an exponent is told to quote it", async () => {
    expect(await problems(tier(`{ above_input_tokens: 200000, input: 0.0000025, output: "1.5e-5" }`))).toEqual([
      expect.stringMatching(/pricing\.long_context\.input: must be a decimal string: quote it: "0\.0000025"$/),
      expect.stringMatching(/pricing\.long_context\.output: must be a decimal string such as "0\.0000025" \(quoted, no exponent\)$/),
    ]);
  });

  it("an unknown tier field is named", async () => {
    expect((await problems(tier(`{ above_input_tokens: 200000, inptu: "0.0000025" }`))).join("\n")).toMatch(/pricing\.long_context: unknown field "inptu"/);
  });

  it("a long-context window no wider than the endpoint's window is named", async () => {
    const withWindow = (window: number) =>
      `models:\n  a/sonnet: { context_window: 200000, endpoints: [{ provider: sim, model: m, pricing: { input: "0.000003", long_context: { above_input_tokens: 200000, input: "0.000006", context_window: ${window} } } }] }\n`;
    expect(await problems(withWindow(1000000))).toEqual([]);
    expect(await problems(withWindow(200000))).toEqual([
      expect.stringMatching(/^F:2:\d+: model a\/sonnet: pricing\.long_context\.context_window 200000 must be wider than the endpoint's context_window 200000$/),
    ]);
  });
});
