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

describe("checkOrder: a dependsOn that is not an array of names", () => {
  it("is one problem naming the plugin and the field, not one per letter", () => {
    const problems = checkOrder(["auth", "weird"], (n) => (n === "weird" ? "auth" : []));
    expect(problems).toEqual([{ index: 1, message: 'plugin weird: dependsOn must be an array of plugin names (["auth"]), not "auth"' }]);
    expect(checkOrder(["weird"], () => [1]).map((p) => p.message)).toEqual(['plugin weird: dependsOn must be an array of plugin names (["auth"]), not [1]']);
  });
});
