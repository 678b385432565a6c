import { describe, expect, it } from "vitest";
import { jsonOutputSchema, objectToolSchema, parametersField } from "./tool-input-schema.ts";

const F = "tools[0].function.parameters";
const city = { city: { type: "string" } };

describe("objectToolSchema: a function's parameters as the object schema Anthropic and Converse take", () => {
  it("absent, null, true or {}: an empty object schema", () => {
    for (const p of [undefined, null, true, {}]) expect(objectToolSchema(p, F)).toEqual({ type: "object", properties: {} });
  });

  it("an object schema is sent as it is; a typeless one gets type object, nothing else changed; a nullable object is an object", () => {
    const schema = { type: "object", properties: city };
    expect(objectToolSchema(schema, F)).toBe(schema);
    expect(objectToolSchema({ properties: city, required: ["city"] }, F)).toEqual({ type: "object", properties: city, required: ["city"] });
    expect(objectToolSchema({ type: ["object", "null"], properties: city }, F)).toEqual({ type: "object", properties: city });
  });

  it("a root that is only a $ref is read as the object it points at", () => {
    const node = { type: "object", properties: city };
    expect(objectToolSchema({ $defs: { N: node }, $ref: "#/$defs/N" }, F)).toEqual({ ...node, $defs: { N: node } });
  });

  it("another type (or not a schema at all) is a 400 naming the field", () => {
    for (const p of [{ type: "string" }, { type: "array", items: {} }, { $defs: { L: { type: "array" } }, $ref: "#/$defs/L" }, "x", [], false]) {
      expect(() => objectToolSchema(p, F)).toThrow(expect.objectContaining({ status: 400, details: { field: F } }));
    }
  });
});

// What Anthropic refuses ("input_schema does not support oneOf, allOf, or anyOf at the top level"), as zod writes it.
const tap = { type: "object", properties: { action: { const: "tap" }, x: { type: "number" }, y: { type: "number" } }, required: ["action", "x", "y"], additionalProperties: false };
const swipe = { type: "object", properties: { action: { const: "swipe" }, direction: { enum: ["up", "down"] }, distance: { type: "number" } }, required: ["action", "direction"], additionalProperties: false };
const ROOT_KEYS = ["allOf", "anyOf", "oneOf"];

describe("objectToolSchema: a root allOf, anyOf or oneOf (which Anthropic refuses) as one object schema", () => {
  it("a oneOf of objects (a zod discriminated union): properties united, a name in several branches an anyOf of its schemas, required what every branch requires, the shapes said in the description", () => {
    const out = objectToolSchema({ oneOf: [tap, swipe] }, F);
    for (const k of ROOT_KEYS) expect(out).not.toHaveProperty(k);
    expect(out).toEqual({
      type: "object",
      properties: { action: { anyOf: [{ const: "tap" }, { const: "swipe" }] }, x: { type: "number" }, y: { type: "number" }, direction: { enum: ["up", "down"] }, distance: { type: "number" } },
      required: ["action"],
      additionalProperties: false,
      description: 'Exactly one of these shapes (? = optional): {action: "tap", x, y} | {action: "swipe", direction, distance?}',
    });
  });

  it("anyOf beside root keywords: they are kept, the root's description first, a property the root and a branch give differently both apply", () => {
    const out = objectToolSchema({
      type: "object", description: "Move the pointer.", $defs: { Tap: tap }, properties: { x: { minimum: 0 } }, required: ["device"],
      anyOf: [{ $ref: "#/$defs/Tap" }, { type: "null" }, { properties: { device: { type: "string" } } }],
    }, F);
    expect(out).toEqual({
      type: "object",
      $defs: { Tap: tap },
      properties: { x: { allOf: [{ minimum: 0 }, { type: "number" }] }, action: { const: "tap" }, y: { type: "number" }, device: { type: "string" } },
      required: ["device"],
      description: 'Move the pointer.\nAt least one of these shapes (? = optional): {action: "tap", x, y} | {device?}',
    });
  });

  it("a typeless anyOf (as 44fa180 sent it with type object added) and the `type: object` + anyOf-of-required pattern", () => {
    expect(objectToolSchema({ anyOf: [tap, swipe] }, F)).toMatchObject({ type: "object", required: ["action"] });
    const either = objectToolSchema({ type: "object", properties: { id: { type: "string" }, name: { type: "string" } }, anyOf: [{ required: ["id"] }, { required: ["name"] }] }, F);
    expect(either).toEqual({ type: "object", properties: { id: { type: "string" }, name: { type: "string" } }, description: "At least one of these shapes (? = optional): {id} | {name}" });
  });

  it("an allOf of objects (a zod intersection): properties merged, required united, a name given differently an allOf of its schemas; a nested oneOf merged too", () => {
    const a = { type: "object", properties: { id: { type: "string" }, n: { type: "integer" } }, required: ["id"] };
    const b = { properties: { n: { minimum: 1 }, tag: { type: "string" } }, required: ["tag"], oneOf: [{ required: ["n"] }, { required: ["tag"] }] };
    expect(objectToolSchema({ allOf: [a, b] }, F)).toEqual({
      type: "object",
      properties: { id: { type: "string" }, n: { allOf: [{ type: "integer" }, { minimum: 1 }] }, tag: { type: "string" } },
      required: ["id", "tag"],
    });
  });

  it("a branch that is not an object schema (a string, an array, a $ref to one, a constant) is a 400 naming the field", () => {
    for (const p of [
      { anyOf: [tap, { type: "string" }] },
      { oneOf: [{ type: "array", items: {} }] },
      { $defs: { S: { type: "string" } }, allOf: [tap, { $ref: "#/$defs/S" }] },
      { anyOf: [{ const: 1 }] },
      { anyOf: [] },
      { anyOf: [{ type: "null" }] },
    ]) {
      expect(() => objectToolSchema(p, F), JSON.stringify(p)).toThrow(expect.objectContaining({ status: 400, details: { field: F } }));
    }
  });
});

describe("objectToolSchema: a root allOf branch that only constrains the object (if/then, not, required) is kept, not a 400", () => {
  const mode = { mode: { type: "string", enum: ["a", "b"] }, x: { type: "string" } };

  it("a root allOf of if/then (x required when mode is a): the conditional goes at the root, both properties kept", () => {
    const conditional = { if: { properties: { mode: { const: "a" } } }, then: { required: ["x"] } };
    expect(objectToolSchema({ type: "object", properties: mode, allOf: [conditional] }, F)).toEqual({ type: "object", properties: mode, ...conditional });
  });

  it("branches of not, dependentRequired and required only: each keyword at the root, required united", () => {
    const out = objectToolSchema({ type: "object", properties: mode, required: ["mode"], allOf: [{ not: { required: ["x", "y"] } }, { dependentRequired: { x: ["mode"] } }, { required: ["x"] }] }, F);
    expect(out).toEqual({ type: "object", properties: mode, required: ["mode", "x"], not: { required: ["x", "y"] }, dependentRequired: { x: ["mode"] } });
  });

  it("a second conditional, which the root cannot hold beside the first, is said in the description; a repeat is not", () => {
    const first = { if: { properties: { mode: { const: "a" } } }, then: { required: ["x"] } };
    const second = { if: { properties: { mode: { const: "b" } } }, then: { required: ["y"] }, else: { not: { required: ["y"] } } };
    const out = objectToolSchema({ type: "object", description: "Pick a mode.", properties: mode, allOf: [first, second, structuredClone(first)] }, F);
    expect(out).toMatchObject({ ...first, description: 'Pick a mode.\nAlso must match: {"if":{"properties":{"mode":{"const":"b"}}},"then":{"required":["y"]},"else":{"not":{"required":["y"]}}}' });
    expect(out).not.toHaveProperty("else");
  });

  it("an anyOf branch that only constrains (not) is one alternative of the union, not a 400", () => {
    const out = objectToolSchema({ type: "object", properties: mode, anyOf: [{ required: ["x"] }, { not: { properties: { mode: { const: "a" } } } }] }, F);
    expect(out).toMatchObject({ type: "object", properties: mode });
    for (const k of ROOT_KEYS) expect(out).not.toHaveProperty(k);
  });

  it("a branch of another type is still a 400 naming the field", () => {
    expect(() => objectToolSchema({ type: "object", allOf: [{ if: { required: ["a"] }, then: { required: ["b"] } }, { type: "string" }] }, F)).toThrow(expect.objectContaining({ status: 400, details: { field: F } }));
  });
});

describe("objectToolSchema: a root union too complex to rewrite is a 400 naming the field, not seconds of CPU", () => {
  /** anyOf of `k` $refs to the next definition, `levels` deep: k^levels paths to walk if each were followed. */
  const fanOut = (levels: number, k: number) => {
    const definitions: Record<string, unknown> = {};
    for (let i = 0; i < levels; i++) definitions[`d${i}`] = { anyOf: Array.from({ length: k }, () => ({ $ref: `#/definitions/d${i + 1}` })) };
    definitions[`d${levels}`] = { type: "object", properties: { a: { type: "string" } } };
    return { type: "object", anyOf: [{ $ref: "#/definitions/d0" }], definitions };
  };

  it("unions nested 17 deep through $refs, 2000 allOf branches giving one property differently, 300 branches of 100 properties", () => {
    for (const p of [
      fanOut(17, 2),
      { type: "object", allOf: Array.from({ length: 2000 }, (_, i) => ({ properties: { a: { minimum: i } } })) },
      { type: "object", allOf: Array.from({ length: 300 }, (_, i) => ({ properties: Object.fromEntries(Array.from({ length: 100 }, (_, j) => [`p${i}_${j}`, {}])) })) },
    ]) {
      expect(() => objectToolSchema(p, F)).toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining("too complex to rewrite"), details: { field: F } }));
    }
  });

  it("a property two branches give differently, nested deeper than the stack can write: a 400, not a 500", () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { not: deep };
    const p = { type: "object", allOf: [{ properties: { a: deep } }, { properties: { a: { type: "string" } } }] };
    expect(() => objectToolSchema(p, F)).toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining("nested too deep"), details: { field: F } }));
    // A branch's own constraint that deep, kept on the root: the same 400.
    expect(() => objectToolSchema({ type: "object", allOf: [{ not: deep }] }, F)).toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining("nested too deep"), details: { field: F } }));
  });

  it("the review's fan-out (16 deep, 4 wide: 4^16 paths) is merged, each definition once", () => {
    expect(objectToolSchema(fanOut(16, 4), F)).toMatchObject({ type: "object", properties: { a: { type: "string" } } });
  });
});

describe("jsonOutputSchema: a JSON response_format's schema as the forced tool's input_schema, by the same rules", () => {
  const R = "response_format.json_schema.schema";
  it("no type, a nullable object, a root oneOf: an object schema", () => {
    expect(jsonOutputSchema({ properties: city }, R)).toEqual({ type: "object", properties: city });
    expect(jsonOutputSchema({ type: ["object", "null"], properties: city }, R)).toEqual({ type: "object", properties: city });
    expect(jsonOutputSchema({ oneOf: [tap, swipe] }, R)).toMatchObject({ type: "object", required: ["action"] });
  });

  it("another type is a 400 naming the field", () => {
    expect(() => jsonOutputSchema({ type: "array" }, R)).toThrow(expect.objectContaining({ status: 400, details: { field: R } }));
  });
});

describe("parametersField: the client's chat field of a tool", () => {
  it("its index among the client's tools (a custom tool dropped before it counts), or its legacy functions entry", () => {
    const fn = { type: "function", function: { name: "f" } };
    expect(parametersField({ tools: [{ type: "custom", custom: { name: "c" } }, fn] }, fn, 0)).toBe("tools[1].function.parameters");
    const legacy = { name: "g" };
    expect(parametersField({ functions: [legacy] }, { type: "function", function: legacy }, 0)).toBe("functions[0].parameters");
    expect(parametersField({}, fn, 2)).toBe("tools[2].function.parameters");
  });
});
