// What a 402 and other messages write for an amount: cents at least ("$1.00", not "$1"), every digit beyond them kept.
import { describe, expect, it } from "vitest";
import { toPico } from "./money.ts";
import { usdText, usdTextOf } from "./usd-text.ts";

describe("usdText", () => {
  it("a whole or one-decimal amount gets its cents", () => {
    expect(usdText(toPico("1"))).toBe("$1.00");
    expect(usdText(0n)).toBe("$0.00");
    expect(usdText(toPico("0.5"))).toBe("$0.50");
    expect(usdText(toPico("100"))).toBe("$100.00");
  });

  it("an amount finer than a cent keeps every digit", () => {
    expect(usdText(toPico("0.0004"))).toBe("$0.0004");
    expect(usdText(toPico("0.0049865"))).toBe("$0.0049865");
    expect(usdText(toPico("100.02"))).toBe("$100.02");
    expect(usdText(1n)).toBe("$0.000000000001");
  });
});

describe("usdTextOf", () => {
  it("a configured amount, however written", () => {
    expect(usdTextOf("100")).toBe("$100.00");
    expect(usdTextOf("0.005")).toBe("$0.005");
    expect(usdTextOf("1e-7")).toBe("$0.0000001");
    expect(usdTextOf("2.5")).toBe("$2.50");
  });
});
