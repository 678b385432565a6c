import { describe, expect, it } from "vitest";
import { checkJsonShape, MAX_JSON_DEPTH } from "./json-shape.ts";

const nest = (n: number): unknown => (n === 0 ? 1 : [nest(n - 1)]);

describe("checkJsonShape", () => {
  it("passes ordinary bodies, up to the depth limit", () => {
    expect(checkJsonShape({ model: "m", messages: [{ role: "user", content: "hi" }], n: -1.5e300 })).toBeUndefined();
    expect(checkJsonShape({ a: nest(MAX_JSON_DEPTH - 1) })).toBeUndefined();
  });

  it("names the first non-finite number by its field path", () => {
    expect(checkJsonShape(JSON.parse('{"max_tokens":1e999}'))).toEqual({ kind: "number", field: "max_tokens" });
    expect(checkJsonShape(JSON.parse('{"a":[0,{"b/c":-1e999}]}'))).toEqual({ kind: "number", field: "a[1].b/c" });
    expect(checkJsonShape(JSON.parse("1e999"))).toEqual({ kind: "number", field: "(body)" });
  });

  it("stops at the depth limit without recursing further (100k levels)", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000));
    expect(checkJsonShape(deep)?.kind).toBe("depth");
    expect(checkJsonShape({ a: nest(MAX_JSON_DEPTH) })).toEqual({ kind: "depth", field: `a${"[0]".repeat(MAX_JSON_DEPTH - 1)}` });
  });
});
