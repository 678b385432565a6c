import { describe, expect, it } from "vitest";
import { checkOrder } from "./order.ts";

const deps: Record<string, string[]> = { budget: ["auth"], router: [], auth: [] };

describe("checkOrder", () => {
  it("accepts dependencies placed before their users", () => {
    expect(checkOrder(["auth", "budget", "router"], (n) => deps[n])).toEqual([]);
  });
  it("names a dependency placed after its user", () => {
    expect(checkOrder(["budget", "auth"], (n) => deps[n])).toEqual([
      { index: 0, message: "budget needs auth before it, but auth comes after it" },
    ]);
  });
  it("names a missing dependency and duplicates", () => {
    const problems = checkOrder(["budget", "router", "router"], (n) => deps[n]);
    expect(problems.map((p) => p.message)).toEqual([
      'plugin "router" is listed twice',
      "budget needs auth before it, but auth is not in the pipeline",
    ]);
  });
});
