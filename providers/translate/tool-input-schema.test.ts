import { describe, expect, it } from "vitest";
import { objectToolSchema, parametersField } from "./tool-input-schema.ts";

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

describe("parametersField: the client's chat field of a tool", () => {
  it("its index among the client's tools (a custom tool dropped before it counts), or its legacy functions entry", () => {
    const fn = { type: "function", function: { name: "f" } };
    expect(parametersField({ tools: [{ type: "custom", custom: { name: "c" } }, fn] }, fn, 0)).toBe("tools[1].function.parameters");
    const legacy = { name: "g" };
    expect(parametersField({ functions: [legacy] }, { type: "function", function: legacy }, 0)).toBe("functions[0].parameters");
    expect(parametersField({}, fn, 2)).toBe("tools[2].function.parameters");
  });
});
