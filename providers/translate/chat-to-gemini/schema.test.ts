import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { geminiSchema } from "./schema.ts";
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
