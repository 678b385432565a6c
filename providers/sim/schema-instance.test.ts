import { describe, expect, it } from "vitest";
import { validInstance, validatorFor } from "./schema-instance.ts";

describe("validInstance", () => {
  it("satisfies draft-07 tool schemas with additionalProperties:false, enums, bounds and nested arrays", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      additionalProperties: false,
      required: ["city", "days", "unit", "tags"],
      properties: {
        city: { type: "string", minLength: 2 },
        days: { type: "integer", minimum: 1, maximum: 14 },
        unit: { enum: ["celsius", "fahrenheit"] },
        tags: { type: "array", minItems: 2, items: { type: "string", maxLength: 3 } },
        when: { type: "string", format: "date-time" },
        ratio: { type: "number", exclusiveMinimum: 0, maximum: 1 },
      },
    };
    const value = validInstance(schema, { words: ["What", "is", "the", "weather", "in", "Paris"] }) as any;
    expect(value.city).toBe("Paris");
    expect(validatorFor(schema)(value)).toBe(true);
    expect(value.tags).toHaveLength(2);
  });

  it("follows $ref/$defs under 2020-12 and picks the non-null branch of anyOf", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { item: { type: "object", properties: { id: { type: "integer" }, note: { anyOf: [{ type: "null" }, { type: "string" }] } }, required: ["id", "note"] } },
      properties: { items: { type: "array", items: { $ref: "#/$defs/item" } } },
      required: ["items"],
    };
    const value = validInstance(schema, { words: [] }) as any;
    expect(value.items[0]).toEqual({ id: 1, note: "example" });
    expect(validatorFor(schema)(value)).toBe(true);
  });

  it("reads draft-04 (boolean exclusive bounds, id), draft-06 and an unknown $schema instead of failing on the meta-schema", () => {
    const props = { id: { type: "string", enum: ["a"] }, n: { type: "integer", minimum: 0, exclusiveMinimum: true, maximum: 5 } };
    const draft04 = { $schema: "http://json-schema.org/draft-04/schema#", id: "http://example.com/s", type: "object", properties: props, required: ["id", "n"] };
    expect(validInstance(draft04, { words: [] })).toEqual({ id: "a", n: 1 });
    const n = { type: "integer", exclusiveMinimum: 0, maximum: 5 };
    for (const $schema of ["http://json-schema.org/draft-06/schema#", "https://example.com/our-meta-schema"]) {
      expect(validInstance({ $schema, type: "object", properties: { n }, required: ["n"] }, { words: [] })).toEqual({ n: 1 });
    }
  });

  it("honours exclusiveMinimum beside minimum (opencode's Zod 4 timeout: minimum -2^53+1, exclusiveMinimum 0), the tighter bound winning", () => {
    // opencode 1.18.33's bash tool; the simulator sent the minimum itself and refused its own value ("/timeout must be > 0").
    const timeout = { type: "integer", minimum: -9007199254740991, exclusiveMinimum: 0, maximum: 9007199254740991, description: "Optional timeout in milliseconds" };
    const bash = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { timeout }, required: ["timeout"], additionalProperties: false };
    expect(validInstance(bash, { words: [] })).toEqual({ timeout: 1 });
    const cases: [Record<string, unknown>, unknown][] = [
      [{ type: "number", minimum: -10, exclusiveMinimum: 2, maximum: 3 }, 2.5],
      [{ type: "integer", minimum: 5, exclusiveMinimum: 2 }, 5],
      [{ type: "integer", minimum: 4, exclusiveMinimum: 4 }, 5],
      [{ type: "integer", maximum: 100, exclusiveMaximum: -3 }, -4],
      [{ type: "integer", exclusiveMaximum: 10, maximum: -7 }, -7],
      [{ type: "number", exclusiveMinimum: 0, exclusiveMaximum: 0.1 }, 0.05],
      [{ type: "integer", exclusiveMinimum: 10, multipleOf: 5 }, 15],
      [{ type: "integer", maximum: -1, multipleOf: 4 }, -4],
      [{ type: "number", minimum: 0.2, multipleOf: 0.5 }, 0.5],
    ];
    for (const [schema, want] of cases) expect([schema, validInstance(schema, { words: [] })]).toEqual([schema, want]);
    const draft04 = { $schema: "http://json-schema.org/draft-04/schema#", type: "integer", minimum: 3, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: true };
    expect(validInstance(draft04, { words: [] })).toBe(4);
  });

  it("says why a schema is invalid for its draft (a boolean exclusiveMinimum after draft-04)", () => {
    const bad = { $schema: "http://json-schema.org/draft-06/schema#", type: "integer", minimum: 0, exclusiveMinimum: true };
    expect(() => validInstance(bad, { words: [] })).toThrow(/exclusiveMinimum must be number/);
  });

  it("never runs the caller's regular expressions (^(a+)+$ on 40 a's and a b would hold the event loop for hours)", () => {
    // A value the pattern refuses comes back: the pattern was not run. (Kept short, so a regression fails, not hangs.)
    const value = validInstance({ type: "object", properties: { q: { type: "string", pattern: "^(a+)+$" } }, required: ["q"] }, { words: ["aaaab"] });
    expect(value).toEqual({ q: "aaaab" });
    const keyed = { type: "object", patternProperties: { "^(x+)+$": { type: "integer" } }, properties: { n: { type: "integer" } }, additionalProperties: false };
    expect(validInstance(keyed, { words: [] })).toEqual({ n: 1 });
  });

  it("refuses, naming the bound, a schema that asks for more than it generates", () => {
    expect(() => validInstance({ type: "array", minItems: 1e9 }, { words: [] })).toThrow("minItems 1000000000 is over the 1000 items");
    expect(() => validInstance({ type: "string", minLength: 1e9 }, { words: [] })).toThrow("minLength 1000000000 is over");
    const nested = { type: "array", minItems: 100, items: { type: "array", minItems: 100, items: { type: "array", minItems: 100, items: { type: "integer" } } } };
    expect(() => validInstance(nested, { words: [] })).toThrow("more than the 10000 values");
    const huge = { type: "object", properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`field_${i}`, { type: "string" }])) };
    expect(() => validInstance(huge, { words: [] })).toThrow("over the 256 KB");
  });
});
