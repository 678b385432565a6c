import { describe, expect, it } from "vitest";
import { resolveRefs } from "./schema-refs.ts";

/**
 * A recursive definition used by `fanout` properties, with its reference text as long as `keyLength` (the key it
 * goes through), and a count of how many times that definition is looked up by its pointer.
 */
function recursiveSchema(keyLength: number, fanout: number) {
  const key = "k".repeat(keyLength);
  const ref = `#/$defs/${key}/N`;
  const props: Record<string, unknown> = {};
  for (let i = 0; i < fanout; i++) props[`p${i}`] = { $ref: ref };
  const looked = { N: 0 };
  const holder = new Proxy({ N: { type: "object", properties: props } }, {
    get(t, p, r) {
      if (p === "N") looked.N++;
      return Reflect.get(t, p, r);
    },
  });
  return { schema: { type: "object", properties: { root: { $ref: ref } }, $defs: { [key]: holder } }, looked };
}

describe("resolveRefs: the work is bounded, not only the output", () => {
  it("a recursive definition used 20 times per level is looked up once, not once per use (8421 times)", () => {
    const { schema, looked } = recursiveSchema(8, 20);
    const out = resolveRefs(schema, "tools[0].function.parameters");
    // Still inlined three levels deep, then left untyped and described.
    expect(out.properties.root.properties.p0.properties.p19.properties.p3).toEqual({ description: "(a N, recursively: same shape as the enclosing N)" });
    expect(looked.N).toBe(1);
  });

  it("a 400 000-character reference (an 8.8 MB request) is decoded once: the same schema out as with a short one", () => {
    const long = recursiveSchema(400_000, 20);
    const short = recursiveSchema(8, 20);
    expect(JSON.stringify(resolveRefs(long.schema))).toBe(JSON.stringify(resolveRefs(short.schema)));
    expect(long.looked.N).toBe(1);
  });

  it("a reference that cannot be resolved is looked for once however often it is used, and still described", () => {
    const looked = { missing: 0 };
    const defs = new Proxy({} as Record<string, unknown>, {
      get(t, p, r) {
        if (p === "missing") looked.missing++;
        return Reflect.get(t, p, r);
      },
      getOwnPropertyDescriptor(t, p) {
        if (p === "missing") looked.missing++;
        return Reflect.getOwnPropertyDescriptor(t, p);
      },
    });
    const props: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) props[`m${i}`] = { $ref: "#/$defs/missing" };
    const out = resolveRefs({ type: "object", properties: props, $defs: defs });
    expect(out.properties.m49).toEqual({ description: "(a #/$defs/missing schema)" });
    expect(looked.missing).toBe(1);
  });
});
