import { describe, expect, it } from "vitest";
import { rootCombinatorsMerged } from "./schema-root-combinator.ts";
import { MERGE_LIMITS, SchemaTooComplex, type MergeWork } from "./schema-merge-budget.ts";

/**
 * The review's fan-out: each definition an anyOf of `k` $refs to the next, `levels` deep, the last an object. Merged
 * naively every path is walked: k^levels branches (4^16 froze the gateway); each definition once, levels * k.
 */
function fanOut(levels: number, k: number) {
  const definitions: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) definitions[`d${i}`] = { anyOf: Array.from({ length: k }, () => ({ $ref: `#/definitions/d${i + 1}` })) };
  definitions[`d${levels}`] = { type: "object", properties: { a: { type: "string" } } };
  return { type: "object", anyOf: [{ $ref: "#/definitions/d0" }], definitions };
}

const work = (): MergeWork => ({ branches: 0, steps: 0 });
const merge = (schema: any, w = work()) => rootCombinatorsMerged(schema, schema, w);

describe("rootCombinatorsMerged: the work is bounded whatever the client sends", () => {
  it.each([[8, 4], [14, 3], [16, 4]])("a definition $ref'd by many branches is merged once (fan-out %i deep, %i wide): one branch looked at per $ref written", (levels, k) => {
    const w = work();
    const out = merge(fanOut(levels, k), w)!;
    expect(out.properties).toEqual({ a: { type: "string" } });
    expect(out).not.toHaveProperty("anyOf");
    expect(w.branches).toBe(1 + levels * k);
  });

  it("unions nested deeper than the limit, a branch that refers to itself, too many branches or too many properties: SchemaTooComplex, not more work", () => {
    const selfRef = { type: "object", $defs: { A: { anyOf: [{ $ref: "#/$defs/A" }, { properties: { x: {} } }] } }, anyOf: [{ $ref: "#/$defs/A" }] };
    const many = { type: "object", allOf: Array.from({ length: MERGE_LIMITS.branches + 1 }, (_, i) => ({ properties: { [`p${i}`]: {} } })) };
    const wide = { type: "object", anyOf: Array.from({ length: 50 }, (_, i) => ({ properties: Object.fromEntries(Array.from({ length: 300 }, (_, j) => [`p${i}_${j}`, {}])) })) };
    for (const [schema, why] of [[fanOut(MERGE_LIMITS.depth + 1, 2), /nested more than 16 deep/], [selfRef, /refers to itself/], [many, /more than 300 branches/], [wide, /more than 10000 keywords/]] as const) {
      const w = work();
      expect(() => merge(schema, w)).toThrow(SchemaTooComplex);
      expect(() => merge(schema)).toThrow(why);
      expect(w.branches).toBeLessThanOrEqual(MERGE_LIMITS.branches + 1);
      expect(w.steps).toBeLessThanOrEqual(MERGE_LIMITS.steps + 300);
    }
  });
});
