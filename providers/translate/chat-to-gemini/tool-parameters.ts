// A function's parameters as Gemini's functionDeclarations[].parameters. They go as the object schema the Anthropic and
// Converse translations send (tool-input-schema.ts): a root that is only a $ref read as its target, a root
// anyOf/oneOf/allOf of objects (zod unions, MCP servers' tools) merged into one object whose description lists the
// shapes, parameters of another type a 400 naming the field. Then cut to Gemini's subset (schema.ts), where a map's
// additionalProperties schema is said in the description. Only a function that takes nothing goes without
// parameters (Gemini has refused an object schema without properties as its parameters): before, a union or a map
// root lost them too, and the model was told the tool takes no arguments.
// Gemini's parametersJsonSchema (full JSON Schema) would carry both as they are, and the catalog's 2.5 models take it,
// but reports say models before 2.5 on Vertex refuse it (envoyproxy/ai-gateway#1512) and the Live API ignores it
// (googleapis/python-genai#1147), while `parameters`, the field the protocol reference names, reaches every model.
import { objectToolSchema } from "../tool-input-schema.ts";
import { geminiSchema } from "./schema.ts";
import type { SchemaBudget } from "./schema-refs.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** `parameters` in Gemini's Schema; undefined when the function takes no arguments. `field` names them in a 400. */
export function geminiToolParameters(parameters: unknown, field: string, budget: SchemaBudget): Json | undefined {
  const object = objectToolSchema(parameters, field);
  // Properties judged once references are resolved ({"type": "object", "$ref": "#/$defs/Args"} has them).
  const params = geminiSchema(object, field, budget);
  return hasProperties(params) || isMap(object) ? params : undefined;
}

const hasProperties = (s: Json) => isObj(s.properties) && Object.keys(s.properties).length > 0;

/** An object schema that admits properties by a schema rather than by name. */
const isMap = (s: Json) => isObj(s.additionalProperties) || (isObj(s.patternProperties) && Object.keys(s.patternProperties).length > 0);
