// A function's parameters as the object schema Anthropic's input_schema and Converse's inputSchema.json must be: both
// refuse a schema without `type: "object"` at its root, where chat takes `{}` (OpenAI's "no parameters") and clients
// leave the type out. Parameters absent, empty or typeless are sent as an object schema, nothing else changed; a root
// that is only a $ref is read as what it points at (schema-root-ref.ts). Parameters of another type (a string, an
// array) describe no function input, and OpenAI and Gemini refuse them too: a 400 naming the field.
import { invalidRequest } from "../../core/errors.ts";
import { rootRefResolved } from "./schema-root-ref.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** `parameters` as an object schema; `field` names them in the 400 when their type is another. */
export function objectToolSchema(parameters: unknown, field: string): Json {
  // JSON Schema's `true` accepts anything: as no schema at all.
  if (parameters === undefined || parameters === null || parameters === true) return { type: "object", properties: {} };
  const schema = rootRefResolved(parameters);
  if (!isObj(schema)) throw notObject(field);
  const type = schema.type;
  if (type === "object") return schema;
  // A nullable object (["object", "null"]): a call's input is never null.
  if (Array.isArray(type) && type.includes("object")) return { ...schema, type: "object" };
  if (type !== undefined) throw notObject(field);
  return Object.keys(schema).length ? { type: "object", ...schema } : { type: "object", properties: {} };
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

const notObject = (field: string) => invalidRequest("a function's parameters must be a JSON schema of type \"object\" for this model's provider", field);
