import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { geminiSchema } from "./schema.ts";
import { schemaBudget } from "./schema-refs.ts";
import { MAX_JSON_DEPTH } from "../../../core/http/json-shape.ts";
import { schemaError } from "../../../test/upstreams/gemini-schema.ts";

const decls = (...parameters: any[]) => ({ tools: [{ functionDeclarations: parameters.map((p, i) => ({ name: `f${i}`, parameters: p })) }] });

describe("JSON Schema -> Gemini's Schema: formats and enums Gemini refuses", () => {
  it("Claude Code's recorded tools (WebFetch url: format uri, a const) pass Gemini's schema checks", () => {
    const rec = JSON.parse(readFileSync(new URL("../../../test/fixtures/agents/claude-code/gemini/turn-1.json", import.meta.url), "utf8"));
    const params = rec.body.tools.map((t: any) => geminiSchema(t.input_schema));
    expect(schemaError(decls(...params))).toBeUndefined();
    const fetch = params[rec.body.tools.findIndex((t: any) => t.name === "WebFetch")];
    expect(fetch.properties.url).toEqual({ type: "string", description: "The URL to fetch content from (format: uri)" });
  });

  it("keeps the formats Gemini allows per type and says the others in the description", () => {
    const out = geminiSchema({ type: "object", properties: {
      when: { type: "string", format: "date-time" }, day: { type: "string", format: "date" }, mail: { type: "string", format: "email", description: "Who" },
      ratio: { type: "number", format: "float" }, n: { type: ["integer", "null"], format: "int64" }, big: { type: "integer", format: "uint64" },
    } });
    expect(out.properties).toEqual({
      when: { type: "string", format: "date-time" }, day: { type: "string", description: "(format: date)" }, mail: { type: "string", description: "Who (format: email)" },
      ratio: { type: "number", format: "float" }, n: { type: "integer", nullable: true, format: "int64" }, big: { type: "integer", description: "(format: uint64)" },
    });
    expect(schemaError(decls(out))).toBeUndefined();
  });

  it("enums only on strings: a number enum is described (its type kept), const is a one-value string enum", () => {
    const out = geminiSchema({ type: "object", properties: {
      level: { type: "integer", enum: [1, 2, 3] }, mode: { const: "fast" }, kind: { enum: ["a", "b", null] },
      on: { type: "boolean", const: true }, size: { enum: [1.5, 2] }, tag: { type: "string", enum: ["x", 2] },
    } });
    expect(out.properties).toEqual({
      level: { type: "integer", description: "(one of: 1, 2, 3)" }, mode: { type: "string", enum: ["fast"] }, kind: { type: "string", enum: ["a", "b"], nullable: true },
      on: { type: "boolean", description: "(must be true)" }, size: { type: "number", description: "(one of: 1.5, 2)" }, tag: { type: "string", enum: ["x", "2"] },
    });
    expect(schemaError(decls(out))).toBeUndefined();
  });

  it("the fake Gemini refuses what the real one does (so a regression shows in the e2e tests)", () => {
    expect(schemaError(decls({ type: "object", properties: { url: { type: "string", format: "uri" } } }))).toMatch(/format: only 'enum' and 'date-time' are supported for STRING type/);
    expect(schemaError(decls({ type: "object", properties: { l: { type: "integer", enum: [1] } } }))).toMatch(/enum: only allowed for STRING type/);
    expect(schemaError({ generationConfig: { responseSchema: { type: "object", properties: { a: { type: "STRING", enum: ["a", 1] } } } } })).toMatch(/TYPE_STRING/);
  });
});

describe("JSON Schema -> Gemini's Schema: $ref/$defs, oneOf, allOf (Gemini has none of them)", () => {
  const addr = { type: "object", properties: { city: { type: "string" }, zip: { type: "string" } }, required: ["city", "zip"] };
  const inlined = { type: "object", properties: { city: { type: "string" }, zip: { type: "string" } }, required: ["city", "zip"] };

  it("a Pydantic nested model ($defs, an Optional one as anyOf [$ref, null]) keeps its fields", () => {
    const out = geminiSchema({ type: "object", $defs: { Addr: addr }, properties: {
      home: { $ref: "#/$defs/Addr" }, work: { anyOf: [{ $ref: "#/$defs/Addr" }, { type: "null" }], description: "Office" },
      old: { type: "array", items: { $ref: "#/definitions/Legacy" } },
    }, definitions: { Legacy: { type: "integer" } }, required: ["home", "work"] });
    expect(out).toEqual({ type: "object", required: ["home", "work"], properties: {
      home: inlined, work: { anyOf: [inlined, { type: "null" }], description: "Office" }, old: { type: "array", items: { type: "integer" } },
    } });
    expect(schemaError(decls(out))).toBeUndefined();
  });

  it("the referencing site's description wins over the definition's; a JSON pointer into properties resolves", () => {
    const out = geminiSchema({ type: "object", properties: {
      headers: { type: "object", description: "HTTP headers", properties: { k: { type: "string" } } },
      extra: { $ref: "#/properties/headers", description: "More headers" },
    } });
    expect(out.properties.extra).toEqual({ type: "object", description: "More headers", properties: { k: { type: "string" } } });
  });

  it("a recursive schema is inlined three levels deep, then left untyped and described (no loop, no 400)", () => {
    const out = geminiSchema({ type: "object", properties: { n: { $ref: "#/$defs/node" } }, $defs: {
      node: { type: "object", properties: { v: { type: "integer" }, child: { $ref: "#/$defs/node" } } },
    } });
    const l1 = out.properties.n;
    const l3 = l1.properties.child.properties.child;
    expect(l1.properties.v).toEqual({ type: "integer" });
    expect(l3.properties.v).toEqual({ type: "integer" });
    expect(l3.properties.child).toEqual({ description: "(a node, recursively: same shape as the enclosing node)" });
    expect(JSON.stringify(out)).not.toContain("$ref");
    expect(schemaError(decls(out))).toBeUndefined();
  });

  it("oneOf becomes anyOf; allOf of objects is one object (properties merged, required joined)", () => {
    const out = geminiSchema({ type: "object", $defs: { Base: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }, properties: {
      pet: { oneOf: [{ type: "object", properties: { bark: { type: "boolean" } } }, { type: "object", properties: { meow: { type: "boolean" } } }] },
      item: { allOf: [{ $ref: "#/$defs/Base" }, { type: "object", properties: { price: { type: "number" } }, required: ["price"] }], description: "An item" },
    } });
    expect(out.properties.pet).toEqual({ anyOf: [{ type: "object", properties: { bark: { type: "boolean" } } }, { type: "object", properties: { meow: { type: "boolean" } } }] });
    expect(out.properties.item).toEqual({ description: "An item", type: "object", properties: { id: { type: "string" }, price: { type: "number" } }, required: ["id", "price"] });
    expect(schemaError(decls(out))).toBeUndefined();
  });

  it("a reference that cannot be resolved is left untyped, saying what it named", () => {
    const out = geminiSchema({ type: "object", properties: { a: { $ref: "https://example.com/a.json" }, b: { $ref: "#/$defs/missing", description: "B" } } });
    expect(out.properties).toEqual({ a: { description: "(a https://example.com/a.json schema)" }, b: { description: "B (a #/$defs/missing schema)" } });
  });

  it("the fake Gemini refuses the keywords the real one does not know ($ref, $defs, oneOf, allOf)", () => {
    expect(schemaError(decls({ type: "object", properties: { home: { $ref: "#/$defs/Addr" } }, $defs: { Addr: addr } }))).toMatch(/Unknown name "\$defs" at 'tools\[0\]\.function_declarations\[0\]\.parameters': Cannot find field/);
    expect(schemaError({ generationConfig: { responseSchema: { type: "object", properties: { p: { oneOf: [{ type: "string" }] } } } } })).toMatch(/Unknown name "oneOf"/);
    expect(schemaError(decls({ type: "object", properties: { a: { type: "string", max_length: 3 } } }))).toBeUndefined();
  });
});

describe("JSON Schema -> Gemini's Schema: inlining is bounded (a 400 naming the field, never a huge body or a crash)", () => {
  it("one big definition referenced 500 times (190 KB in, ~87 MB once inlined) is refused fast", () => {
    const big: any = { type: "object", properties: {} };
    for (let i = 0; i < 4000; i++) big.properties[`p${i}`] = { type: "string", description: "d" };
    const props: any = {};
    for (let i = 0; i < 500; i++) props[`r${i}`] = { $ref: "#/$defs/Big" };
    const t = Date.now();
    expect(() => geminiSchema({ type: "object", $defs: { Big: big }, properties: props }, "response_format.json_schema.schema")).toThrow(expect.objectContaining({
      status: 400, message: expect.stringContaining("response_format.json_schema.schema is too large once its $refs are inlined"),
      details: expect.objectContaining({ field: "response_format.json_schema.schema", reason: "schema_too_large" }),
    }));
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it("the budget is shared by a request's schemas; a big schema without references still passes", () => {
    const flat: any = { type: "object", properties: {} };
    for (let i = 0; i < 20000; i++) flat.properties[`prop${i}`] = { type: "string", description: "some text here" };
    expect(Object.keys(geminiSchema(flat).properties)).toHaveLength(20000);
    const budget = schemaBudget();
    geminiSchema(flat, "tools[0].function.parameters", budget);
    expect(() => geminiSchema(flat, "tools[1].function.parameters", budget)).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: "tools[1].function.parameters" }) }));
  });

  it("nesting that appears only after inlining (500 references, each 30 levels deep) is a 400, not a stack overflow", () => {
    const defs: any = { D500: { type: "string" } };
    for (let i = 0; i < 500; i++) {
      let inner: any = { $ref: `#/$defs/D${i + 1}` };
      for (let j = 0; j < 30; j++) inner = { type: "object", properties: { a: inner } };
      defs[`D${i}`] = inner;
    }
    expect(() => geminiSchema({ type: "object", $defs: defs, properties: { x: { $ref: "#/$defs/D0" } } }, "tools[2].function.parameters")).toThrow(expect.objectContaining({
      status: 400, message: expect.stringContaining(`tools[2].function.parameters nests deeper than ${MAX_JSON_DEPTH} levels`),
      details: expect.objectContaining({ field: "tools[2].function.parameters", reason: "schema_too_deep" }),
    }));
    const chain: any = { C5000: { type: "string" } };
    for (let i = 0; i < 5000; i++) chain[`C${i}`] = { $ref: `#/$defs/C${i + 1}` };
    expect(() => geminiSchema({ $defs: chain, $ref: "#/$defs/C0" })).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ reason: "schema_too_deep" }) }));
  });
});

describe("JSON Schema -> Gemini's Schema: allOf means every part (constraints intersected)", () => {
  const v = (allOf: any[]) => geminiSchema({ type: "object", properties: { v: { allOf } } }).properties.v;

  it("enums intersect (const too); types intersect; bounds take the tighter", () => {
    expect(v([{ type: "string", enum: ["a", "b", "c"] }, { enum: ["b", "c", "d"] }])).toEqual({ type: "string", enum: ["b", "c"] });
    expect(v([{ type: "string", enum: ["a", "b"] }, { const: "b" }])).toEqual({ type: "string", enum: ["b"] });
    expect(v([{ type: ["integer", "null"], minimum: 0, maximum: 10 }, { type: "number", minimum: 2, maximum: 20 }])).toEqual({ type: "integer", minimum: 2, maximum: 10 });
  });

  it("items are merged recursively: both parts' properties and required kept", () => {
    expect(v([
      { type: "array", items: { type: "object", properties: { a: { type: "string" } }, required: ["a"] } },
      { items: { type: "object", properties: { b: { type: "string" } }, required: ["b"] }, minItems: 1 },
    ])).toEqual({ type: "array", minItems: 1, items: { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a", "b"] } });
  });

  it("what Gemini's subset cannot intersect (two unions, disjoint enums) keeps the first and says the other", () => {
    const out = v([{ anyOf: [{ type: "string" }, { type: "integer" }] }, { anyOf: [{ type: "integer" }, { type: "boolean" }] }]);
    expect(out.anyOf).toEqual([{ type: "string" }, { type: "integer" }]);
    expect(out.description).toBe('(must also match: anyOf [{"type":"integer"},{"type":"boolean"}])');
    const none = v([{ type: "string", enum: ["a"] }, { type: "string", enum: ["b"] }]);
    expect(none).toEqual({ type: "string", enum: ["a"], description: '(must also match: enum ["b"])' });
    expect(schemaError(decls({ type: "object", properties: { out, none } }))).toBeUndefined();
  });
});

describe("JSON Schema -> Gemini's Schema: a type list of several types is a union (Gemini's type is one value)", () => {
  const p = (schema: any) => geminiSchema({ type: "object", properties: { v: schema } }).properties.v;

  it("['string', 'number'] is anyOf of a string and a number, not a string; 'null' in the list is nullable", () => {
    expect(p({ type: ["string", "number"], description: "An id" })).toEqual({ description: "An id", anyOf: [{ type: "string" }, { type: "number" }] });
    expect(p({ type: ["string", "number", "null"] })).toEqual({ anyOf: [{ type: "string" }, { type: "number" }], nullable: true });
    // One type besides null stays a type with nullable; integer within number is a number.
    expect(p({ type: ["integer", "null"] })).toEqual({ type: "integer", nullable: true });
    expect(p({ type: ["integer", "number"] })).toEqual({ type: "number" });
  });

  it("each type's keywords go to its own branch; what describes the whole value stays on the union", () => {
    const out = p({
      type: ["string", "integer", "array", "object", "null"], title: "Value", description: "Anything",
      minLength: 1, pattern: "^a", minimum: 0, maximum: 9, format: "int64",
      items: { type: "string" }, minItems: 1, properties: { a: { type: "string" } }, required: ["a"],
    });
    expect(out).toEqual({
      title: "Value", description: "Anything", nullable: true, anyOf: [
        { type: "string", minLength: 1, pattern: "^a" },
        { type: "integer", minimum: 0, maximum: 9, format: "int64" },
        { type: "array", items: { type: "string" }, minItems: 1 },
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      ],
    });
    expect(p({ type: ["string", "number"], format: "date-time" })).toEqual({ anyOf: [{ type: "string", format: "date-time" }, { type: "number" }] });
    expect(schemaError(decls({ type: "object", properties: { out } }))).toBeUndefined();
  });

  it("an enum's values go to the branch of their own type (zod's literal unions); a type no value has is left out", () => {
    expect(p({ type: ["string", "number"], enum: ["auto", 1, 2.5] })).toEqual({ anyOf: [{ type: "string", enum: ["auto"] }, { type: "number", description: "(one of: 1, 2.5)" }] });
    expect(p({ type: ["string", "boolean", "null"], enum: ["a", null] })).toEqual({ type: "string", enum: ["a"], nullable: true });
    // null in the type list but not in the enum: null is not allowed.
    expect(p({ type: ["string", "integer", "null"], enum: ["a", 3] })).toEqual({ anyOf: [{ type: "string", enum: ["a"] }, { type: "integer", description: "(must be 3)" }] });
  });

  it("anyOf / oneOf branches that are type lists are split too (one flat union)", () => {
    expect(p({ anyOf: [{ type: ["string", "number"] }, { type: "null" }] })).toEqual({ anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] });
    expect(p({ oneOf: [{ type: ["boolean", "integer"], description: "flag or count" }, { type: "array", items: { type: ["string", "integer"] } }] })).toEqual({ anyOf: [
      { description: "flag or count", anyOf: [{ type: "boolean" }, { type: "integer" }] },
      { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
    ] });
  });

  it("a type list beside an anyOf: each branch is narrowed to the listed types (both must hold)", () => {
    expect(p({ type: ["object", "string"], minLength: 2, anyOf: [{ properties: { a: { type: "string" } }, required: ["a"] }, { type: "boolean" }, { type: ["string", "null"], maxLength: 5 }] })).toEqual({ anyOf: [
      { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      { type: "string", minLength: 2 },
      { type: "string", maxLength: 5, minLength: 2 },
    ] });
  });

  it("type lists reached through $ref and allOf are split as well", () => {
    const out = geminiSchema({ type: "object", $defs: { Id: { type: ["string", "integer"], description: "An id" } }, properties: {
      id: { $ref: "#/$defs/Id" }, n: { allOf: [{ type: ["string", "number", "boolean"] }, { type: ["string", "number"] }] },
    } });
    expect(out.properties).toEqual({ id: { description: "An id", anyOf: [{ type: "string" }, { type: "integer" }] }, n: { anyOf: [{ type: "string" }, { type: "number" }] } });
  });

  it("the fake Gemini refuses a type list, so a regression shows in the e2e tests", () => {
    expect(schemaError(decls({ type: "object", properties: { v: { type: ["string", "number"] } } }))).toMatch(/Unknown name "type" at 'tools\[0\]\.function_declarations\[0\]\.parameters\.properties\[v\]': Proto field is not repeating, cannot start list/);
  });

  it("splitting beside an anyOf copies branches: the copies count toward the request's budget (a 400, never a blow-up)", () => {
    let s: any = { type: "string" };
    for (let i = 0; i < 12; i++) s = { type: ["object", "string"], properties: { a: s }, anyOf: Array.from({ length: 8 }, (_, k) => ({ description: `part ${k}` })) };
    expect(() => geminiSchema({ type: "object", properties: { s } }, "tools[0].function.parameters")).toThrow(expect.objectContaining({
      status: 400, details: expect.objectContaining({ field: "tools[0].function.parameters", reason: "schema_too_large" }),
    }));
  });
});

describe("JSON Schema -> Gemini's Schema: constraints Gemini has no keyword for are said in the description", () => {
  it("exclusiveMinimum, multipleOf, uniqueItems, prefixItems, not, if/then, dependentRequired, patternProperties, an additionalProperties schema", () => {
    const out = geminiSchema({ type: "object", properties: {
      pos: { type: "number", exclusiveMinimum: 0 }, step: { type: "number", multipleOf: 0.5, description: "Step" },
      tags: { type: "array", items: { type: "string" }, uniqueItems: true }, pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
      name: { type: "string", not: { const: "root" } }, mode: { type: "string", if: { const: "a" }, then: { minLength: 1 } },
      env: { type: "object", properties: { a: { type: "string" } }, dependentRequired: { a: ["b"] }, patternProperties: { "^x-": { type: "string" } }, additionalProperties: { type: "integer" } },
      open: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false }, plain: { type: "array", items: { type: "string" }, uniqueItems: false },
    } });
    expect(out.properties).toEqual({
      pos: { type: "number", description: "(exclusiveMinimum: 0)" }, step: { type: "number", description: "Step (multipleOf: 0.5)" },
      tags: { type: "array", items: { type: "string" }, description: "(uniqueItems: true)" }, pair: { type: "array", description: '(prefixItems: [{"type":"string"},{"type":"number"}])' },
      name: { type: "string", description: '(not: {"const":"root"})' }, mode: { type: "string", description: '(if: {"const":"a"}) (then: {"minLength":1})' },
      env: { type: "object", properties: { a: { type: "string" } }, description: '(additionalProperties: {"type":"integer"}) (patternProperties: {"^x-":{"type":"string"}}) (dependentRequired: {"a":["b"]})' },
      open: { type: "object", properties: { a: { type: "string" } } }, plain: { type: "array", items: { type: "string" } },
    });
    expect(schemaError(decls(out))).toBeUndefined();
  });

  it("a long constraint is cut: advice to the model, not a copy of the schema", () => {
    const out = geminiSchema({ type: "object", properties: { x: { type: "string", not: { enum: Array.from({ length: 500 }, (_, i) => `v${i}`) } } } });
    expect(out.properties.x.description.length).toBeLessThan(230);
    expect(out.properties.x.description).toMatch(/^\(not: \{"enum":\["v0",.*…\)$/);
  });
});
