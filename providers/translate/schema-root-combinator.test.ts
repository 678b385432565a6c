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

describe("rootCombinatorsMerged: a property several branches give differently is one flat list of its distinct schemas", () => {
  it("200 allOf branches each giving `a` a bound: one allOf of 200, nothing nested; 200 anyOf branches: one anyOf of 200", () => {
    const bounds = Array.from({ length: 200 }, (_, i) => ({ properties: { a: { minimum: i } } }));
    expect(merge({ type: "object", allOf: bounds })!.properties.a).toEqual({ allOf: bounds.map((b) => b.properties.a) });
    expect(merge({ type: "object", anyOf: bounds })!.properties.a).toEqual({ anyOf: bounds.map((b) => b.properties.a) });
  });

  it("the root's schema, allOf branches, a nested union's anyOf and a repeat: one allOf, each schema once, the union's anyOf in it whole", () => {
    const out = merge({
      type: "object",
      properties: { a: { type: "integer" } },
      allOf: [
        { properties: { a: { minimum: 0 } } },
        { allOf: [{ properties: { a: { maximum: 99 } } }, { properties: { a: { type: "integer" } } }] },
        { anyOf: [{ properties: { a: { maximum: 9 } } }, { properties: { a: { maximum: 5 } } }] },
        { properties: { a: { minimum: 0 } } },
      ],
    })!;
    expect(out.properties.a).toEqual({ allOf: [{ type: "integer" }, { minimum: 0 }, { maximum: 99 }, { anyOf: [{ maximum: 9 }, { maximum: 5 }] }] });
  });

  it("definitions reused at each level whose property each gives differently (6^7 copies when written out): SchemaTooComplex past the byte limit", () => {
    const names = Array.from({ length: 6 }, (_, j) => `N${j}_`);
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 7; i++) {
      for (const [j, n] of names.entries()) $defs[`${n}${i}`] = { allOf: [{ anyOf: names.map((m) => ({ $ref: `#/$defs/${m}${i + 1}` })) }, { properties: { p: { minimum: i * 100 + j } } }] };
    }
    for (const n of names) $defs[`${n}7`] = { type: "object", properties: { p: { title: n } } };
    expect(() => merge({ type: "object", $defs, anyOf: [{ $ref: "#/$defs/N0_0" }] })).toThrow(/over 1000000 bytes/);
  });

  it("a property's schema nested deeper than the stack, given by two branches: SchemaTooComplex, not a RangeError", () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { not: deep };
    expect(() => merge({ type: "object", allOf: [{ properties: { a: deep } }, { properties: { a: { type: "string" } } }] })).toThrow(SchemaTooComplex);
  });
});

describe("rootCombinatorsMerged: required names and the shapes note are bounded too", () => {
  const reusedRequired = (n: number, branches: number, kind: "anyOf" | "allOf") => ({
    type: "object",
    $defs: { A: { type: "object", required: Array.from({ length: n }, (_, i) => `r${i}`) } },
    [kind]: Array.from({ length: branches }, () => ({ $ref: "#/$defs/A" })),
  });

  it.each(["anyOf", "allOf"] as const)("a definition requiring 300,000 names, %s'd by 290 branches: SchemaTooComplex, the names counted in the work (once, not per branch)", (kind) => {
    const w = work();
    expect(() => merge(reusedRequired(300_000, 290, kind), w)).toThrow(/more than 10000 keywords, properties and required names/);
    expect(w.steps).toBeLessThanOrEqual(300_000 + 400);
  });

  it("a definition requiring 50 names $ref'd by 200 branches: required once, the work counting each name once", () => {
    for (const kind of ["anyOf", "allOf"] as const) {
      const w = work();
      const out = merge(reusedRequired(50, 200, kind), w)!;
      expect(out.required).toEqual(Array.from({ length: 50 }, (_, i) => `r${i}`));
      expect(w.steps).toBeLessThan(50 * 200);
    }
  });

  it("one definition with long property names $ref'd by 20 branches: the shapes note lists it once and stays under 4 KB, ending in …", () => {
    const properties = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`p${i}${"x".repeat(60_000)}`, { type: "string" }]));
    const out = merge({ type: "object", $defs: { A: { type: "object", properties } }, anyOf: Array.from({ length: 20 }, () => ({ $ref: "#/$defs/A" })) })!;
    expect(out.description.length).toBeLessThanOrEqual(4096);
    expect(out.description).toMatch(/^At least one of these shapes \(\? = optional\): \{p0x+…$/);
    expect(Object.keys(out.properties)).toHaveLength(15);
  });

  it("distinct branches are each listed once in the shapes note, a repeat left out", () => {
    const tap = { type: "object", properties: { action: { const: "tap" }, x: {} }, required: ["action", "x"] };
    const swipe = { type: "object", properties: { action: { const: "swipe" }, d: {} }, required: ["action"] };
    const out = merge({ type: "object", anyOf: [tap, swipe, tap] })!;
    expect(out.description).toBe('At least one of these shapes (? = optional): {action: "tap", x} | {action: "swipe", d?}');
  });
});
