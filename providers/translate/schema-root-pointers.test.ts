import { describe, expect, it } from "vitest";
import { localRef } from "./json-pointer.ts";
import { rootCombinatorsMerged } from "./schema-root-combinator.ts";
import { MERGE_LIMITS, newMergeWork, SchemaTooComplex } from "./schema-merge-budget.ts";
import { objectToolSchema } from "./tool-input-schema.ts";

/** Every `$ref` in `schema` (iteratively: a test helper must not be the thing that overflows). */
function refsOf(schema: unknown): string[] {
  const refs: string[] = [];
  const stack = [schema];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== "object") continue;
    if (!Array.isArray(node) && typeof (node as any).$ref === "string") refs.push((node as any).$ref);
    stack.push(...Object.values(node));
  }
  return refs;
}

const point = { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"], additionalProperties: false };

describe("rootCombinatorsMerged: a $ref into the removed root combinator still resolves in the schema sent", () => {
  it("an MCP tool's zod discriminated union as zod-to-json-schema writes it (from and to point into the first branch): every $ref of the schema sent resolves, to the point", () => {
    // zodToJsonSchema(z.discriminatedUnion("action", [z.object({ action: z.literal("tap"), at: point }).strict(),
    //   z.object({ action: z.literal("drag"), from: point, to: point }).strict()]), { strictUnions: true }), as it is.
    const zod = JSON.parse('{"anyOf":[{"type":"object","properties":{"action":{"type":"string","const":"tap"},"at":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},"required":["action","at"],"additionalProperties":false},{"type":"object","properties":{"action":{"type":"string","const":"drag"},"from":{"$ref":"#/anyOf/0/properties/at"},"to":{"$ref":"#/anyOf/0/properties/at"}},"required":["action","from","to"],"additionalProperties":false}],"$schema":"http://json-schema.org/draft-07/schema#"}');
    const out = objectToolSchema(zod, "tools[0].function.parameters");
    expect(out).not.toHaveProperty("anyOf");
    const refs = refsOf(out);
    expect(refs).toHaveLength(2);
    for (const ref of refs) expect(localRef(out, ref), ref).toEqual(point);
    expect(out.properties.at).toEqual(point);
  });

  it("a branch's sub-schema reused by another branch (zod-to-json-schema's pointer): kept under $defs, each pointer to it rewritten", () => {
    const schema = {
      anyOf: [
        { type: "object", properties: { action: { const: "tap" }, at: point }, required: ["action", "at"] },
        { type: "object", properties: { action: { const: "drag" }, from: { $ref: "#/anyOf/0/properties/at" }, to: { $ref: "#/anyOf/0/properties/at" } }, required: ["action", "from", "to"] },
      ],
    };
    const out = rootCombinatorsMerged(schema)!;
    expect(out.properties.from).toEqual({ $ref: "#/$defs/anyOf_0_properties_at" });
    expect(out.properties.to).toEqual({ $ref: "#/$defs/anyOf_0_properties_at" });
    expect(out.$defs).toEqual({ anyOf_0_properties_at: point });
    expect(schema.anyOf[1]!.properties.from).toEqual({ $ref: "#/anyOf/0/properties/at" });
  });

  it("a branch pointing at itself (a recursive zod.lazy), next to the client's own $defs with a name taken: one definition that refers to itself", () => {
    const node = { type: "object", properties: { children: { type: "array", items: { $ref: "#/anyOf/0" } }, leaf: { $ref: "#/$defs/Leaf" } } };
    const schema = { $defs: { Leaf: { type: "string" }, anyOf_0: { type: "null" } }, anyOf: [node, { type: "object", properties: { id: { type: "string" } } }] };
    const out = rootCombinatorsMerged(schema)!;
    expect(out.properties.children.items).toEqual({ $ref: "#/$defs/anyOf_0_2" });
    expect(out.$defs.anyOf_0_2.properties.children.items).toEqual({ $ref: "#/$defs/anyOf_0_2" });
    expect(out.$defs.Leaf).toBe(schema.$defs.Leaf);
    for (const ref of refsOf(out)) expect(localRef(out, ref), ref).toBeDefined();
  });

  it("a schema with no such pointer is not touched: no $defs added", () => {
    const schema = { $defs: { P: point }, anyOf: [{ properties: { at: { $ref: "#/$defs/P" } } }, { properties: { id: {} } }] };
    const out = rootCombinatorsMerged(schema)!;
    expect(out.$defs).toBe(schema.$defs);
    expect(out.properties.at).toBe(schema.anyOf[0]!.properties.at);
  });

  it("2000 pointers whose targets' names clean up alike (CJK $defs names): numbered name_2, name_3..., the schema sent about the size of the client's, each counted in the merge's work", () => {
    const names = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(0x4e00 + i));
    const branch = { type: "object", properties: { a: { type: "string" } }, $defs: Object.fromEntries(names.map((n) => [n, {}])) };
    const schema = { type: "object", anyOf: [branch], $defs: { r: { anyOf: names.map((n) => ({ $ref: `#/anyOf/0/$defs/${n}` })) } } };
    const work = newMergeWork();
    const out = rootCombinatorsMerged(schema, schema, work)!;
    const refs = out.$defs.r.anyOf.map((b: any) => b.$ref);
    expect(new Set(refs).size).toBe(2000);
    expect([...refs].sort()).toEqual(["#/$defs/anyOf_0__defs__", ...Array.from({ length: 1999 }, (_, i) => `#/$defs/anyOf_0__defs___${i + 2}`)].sort());
    for (const ref of refsOf(out)) expect(localRef(out, ref), ref).toEqual({});
    // Each name grown by one "_" per collision wrote 4 MB.
    expect(JSON.stringify(out).length).toBeLessThan(3 * JSON.stringify(schema).length);
    expect(work.steps).toBeGreaterThanOrEqual(2000);
  });

  it("more pointer targets than the merge's budget: SchemaTooComplex (the caller's 400), not a schema sent", () => {
    const n = MERGE_LIMITS.steps + 1;
    const names = Array.from({ length: n }, (_, i) => `d${i}`);
    const branch = { type: "object", properties: { a: { type: "string" } }, $defs: Object.fromEntries(names.map((x) => [x, {}])) };
    const schema = { type: "object", anyOf: [branch], $defs: { r: { anyOf: names.map((x) => ({ $ref: `#/anyOf/0/$defs/${x}` })) } } };
    expect(() => rootCombinatorsMerged(schema)).toThrow(SchemaTooComplex);
  });
});
