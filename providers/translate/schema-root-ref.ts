// A schema whose root is only a reference, as Pydantic v2's model_json_schema() writes a recursive model:
// {"$defs": {"Node": {...an object...}}, "$ref": "#/$defs/Node"}. A provider that wants an object at the root
// (Anthropic's input_schema is {type: "object", …}) reads it as the object it points at: the definition's keywords
// at the root, $defs (and the rest beside the $ref) kept there, so the references inside still resolve.
import { localRef } from "./json-pointer.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** Keywords beside a root $ref that constrain nothing: the root is then exactly what the $ref points at. */
const BESIDE = new Set(["$ref", "$defs", "definitions", "$schema", "$id", "$comment", "title", "description"]);
/** A reference to a reference is followed this many times at most (a cycle stays a reference). */
const MAX_HOPS = 32;

/**
 * `schema` with a root that is only a local $ref replaced by its target; any other schema as it is. `doc` is the
 * document its references are relative to: the schema itself, or the one holding it (a branch of a root anyOf).
 */
export function rootRefResolved<T>(schema: T, doc: unknown = schema): T {
  let root: unknown = schema;
  for (let hop = 0; hop < MAX_HOPS && isObj(root) && typeof root.$ref === "string"; hop++) {
    if (Object.keys(root).some((k) => !BESIDE.has(k))) break;
    // References are relative to the document: resolved in the schema as the client sent it.
    const target = localRef(doc, root.$ref);
    if (!isObj(target)) break;
    const { $ref: _, ...beside } = root;
    root = { ...target, ...beside };
  }
  return root as T;
}
