// A function's parameters as Gemini's functionDeclarations[] fields. They go as the object schema the Anthropic and
// Converse translations send (tool-input-schema.ts): a root that is only a $ref read as its target, a root
// anyOf/oneOf/allOf of objects (zod unions, MCP servers' tools) merged into one object whose description lists the
// shapes, parameters of another type a 400 naming the field. Then cut to Gemini's subset (schema.ts) as `parameters`.
// A map root (its arguments admitted by a schema, none by name: {"type": "object", "additionalProperties": {…}})
// has no properties to give there, and Gemini has refused an object `parameters` without properties ("parameters.
// properties: should be non-empty for OBJECT type": agno-agi/agno#2112, pipecat-ai/pipecat-flows#110; later reports
// differ), which would fail the whole request. So a map goes as `parametersJsonSchema`, the JSON Schema field Google
// documents for FunctionDeclaration with a root additionalProperties in its example, which Gemini CLI fills with MCP
// servers' schemas and every catalog Gemini model (2.5) takes. Models before 2.5 refuse that field (envoyproxy/
// ai-gateway#1512): a map goes to them without parameters, as it did before maps were kept. `parameters` stays the
// field for everything else: it reaches every Gemini model. Only a function that takes nothing goes without either.
import { objectToolSchema } from "../tool-input-schema.ts";
import { geminiSchema } from "./schema.ts";
import type { SchemaBudget } from "./schema-refs.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** The declaration's `parameters` or `parametersJsonSchema`; {} when it goes with neither. `field` names them in a 400. */
export function geminiToolParameters(parameters: unknown, field: string, budget: SchemaBudget, upstreamModel: string): { parameters?: Json; parametersJsonSchema?: Json } {
  const object = objectToolSchema(parameters, field);
  // Properties judged once references are resolved ({"type": "object", "$ref": "#/$defs/Args"} has them).
  const params = geminiSchema(object, field, budget);
  if (hasProperties(params)) return { parameters: params };
  return isMap(object) && takesJsonSchema(upstreamModel) ? { parametersJsonSchema: object } : {};
}

const hasProperties = (s: Json) => isObj(s.properties) && Object.keys(s.properties).length > 0;

/** An object schema that admits properties by a schema rather than by name. */
const isMap = (s: Json) => isObj(s.additionalProperties) || (isObj(s.patternProperties) && Object.keys(s.patternProperties).length > 0);

/** Gemini 1.x and 2.0 (gemini-pro, gemini-1.5-pro, gemini-2.0-flash-001) refuse parametersJsonSchema; later ones take it. */
const takesJsonSchema = (model: string) => !/(^|\/)gemini-(1\.\d+|2\.0)(-|$)|(^|\/)gemini-(pro|pro-vision|ultra)$/.test(model);
