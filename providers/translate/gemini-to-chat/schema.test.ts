import { describe, expect, it } from "vitest";
import { Ajv } from "../../../core/ajv.ts";
import { jsonSchemaOf } from "./schema.ts";

// What a chat upstream validates with: the translated schema must accept null wherever Gemini's `nullable` did.
const accepts = (gemini: unknown, value: unknown) => new Ajv({ strict: false }).compile(jsonSchemaOf(gemini))(value);

describe("jsonSchemaOf: Gemini's nullable", () => {
  it("a nullable type takes null beside its own values", () => {
    expect(jsonSchemaOf({ type: "STRING", nullable: true })).toEqual({ type: ["string", "null"] });
    expect(accepts({ type: "STRING", nullable: true }, null)).toBe(true);
  });

  it("a nullable union without a type of its own takes null (it lost nullable and refused null)", () => {
    const union = { anyOf: [{ type: "STRING" }, { type: "INTEGER" }], nullable: true };
    expect(accepts(union, null)).toBe(true);
    expect(accepts(union, "a")).toBe(true);
    expect(accepts(union, 2.5)).toBe(false);
    expect(accepts({ anyOf: [{ type: "STRING" }, { type: "INTEGER" }] }, null)).toBe(false);
  });

  it("a nullable enum takes null, which Gemini allowed and a JSON Schema enum would refuse", () => {
    const e = { type: "STRING", enum: ["low", "high"], nullable: true };
    expect(accepts(e, null)).toBe(true);
    expect(accepts(e, "low")).toBe(true);
    expect(accepts(e, "mid")).toBe(false);
  });
});
