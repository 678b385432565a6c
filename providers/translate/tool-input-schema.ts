// A function's parameters as the object schema Anthropic's input_schema and Converse's inputSchema.json must be: both
// refuse a schema without `type: "object"` at its root, where chat takes `{}` (OpenAI's "no parameters") and clients
// leave the type out, and Anthropic refuses allOf/anyOf/oneOf at the root, which zod unions (MCP servers' tools) write.
// Parameters absent, empty or typeless are sent as an object schema, nothing else changed; a root that is only a $ref
// is read as what it points at (schema-root-ref.ts); a root combinator of objects is merged into one object
// (schema-root-combinator.ts), a branch that only constrains the object (if/then, not, required) kept as such. Parameters of another type (a string, an array) describe no function input, and OpenAI
// and Gemini refuse them too: a 400 naming the field. The forced tool of JSON mode (response_format) takes its schema
// the same way (jsonOutputSchema).
import { invalidRequest } from "../../core/errors.ts";
import { rootRefResolved } from "./schema-root-ref.ts";
import { hasRootCombinator, rootCombinatorsMerged } from "./schema-root-combinator.ts";
import { SchemaTooComplex } from "./schema-merge-budget.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** `parameters` as an object schema; `field` names them in the 400 when their type is another. */
export function objectToolSchema(parameters: unknown, field: string): Json {
  // JSON Schema's `true` accepts anything: as no schema at all.
  if (parameters === undefined || parameters === null || parameters === true) return { type: "object", properties: {} };
  return asObject(parameters, field, "a function's parameters must be a JSON schema of type \"object\"");
}

/** A JSON response_format's schema as the input_schema of the forced tool that answers it (the same rules). */
export function jsonOutputSchema(schema: unknown, field: string): Json {
  return asObject(schema, field, "the JSON schema's root must be an object");
}

function asObject(sent: unknown, field: string, rule: string): Json {
  const schema = rootRefResolved(sent);
  if (!isObj(schema)) throw notObject(rule, field);
  const type = schema.type;
  // A nullable object (["object", "null"]): a call's input is never null.
  const nullable = Array.isArray(type) && type.includes("object");
  if (type !== undefined && type !== "object" && !nullable) throw notObject(rule, field);
  if (!Object.keys(schema).length) return { type: "object", properties: {} };
  const object = type === "object" ? schema : nullable ? { ...schema, type: "object" } : { type: "object", ...schema };
  if (!hasRootCombinator(object)) return object;
  const merged = mergedOrRefused(object, sent, field);
  if (!merged) throw invalidRequest(`${rule} for this model's provider: each branch of a root allOf, anyOf or oneOf must be an object schema`, field);
  return merged;
}

/** The root combinators merged; a schema past the merge's limits (schema-merge-budget.ts) a 400 naming the field. */
function mergedOrRefused(object: Json, sent: unknown, field: string): Json | undefined {
  try {
    return rootCombinatorsMerged(object, sent);
  } catch (e) {
    if (e instanceof SchemaTooComplex) throw invalidRequest(`the schema's root allOf, anyOf or oneOf is too complex to rewrite for this model's provider: ${e.message}`, field);
    throw e;
  }
}

/**
 * Where the client's chat body holds `tool` (an element of the tools plainChatTools left, k-th of them): its own index
 * among `tools` (custom tools dropped before it shift chat's), or its legacy `functions` entry.
 */
export function parametersField(sent: any, tool: unknown, k: number): string {
  const at = Array.isArray(sent?.tools) ? sent.tools.indexOf(tool) : -1;
  if (at >= 0) return `tools[${at}].function.parameters`;
  const fn = Array.isArray(sent?.functions) ? sent.functions.indexOf((tool as any)?.function) : -1;
  return fn >= 0 ? `functions[${fn}].parameters` : `tools[${k}].function.parameters`;
}

const notObject = (rule: string, field: string) => invalidRequest(`${rule} for this model's provider`, field);
