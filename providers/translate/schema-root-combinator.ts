// Anthropic refuses a tool whose input_schema has allOf, anyOf or oneOf at its root ("input_schema does not support
// oneOf, allOf, or anyOf at the top level"), and the whole request with it: one MCP tool written as a zod union breaks
// every request of an agent offering it. Such a root is rewritten as one object schema, the keywords beside the
// combinator kept:
// - allOf of objects: properties merged (a name two branches give differently: allOf of its schemas), required united;
// - anyOf / oneOf of objects: properties united (a name several branches give differently: anyOf of its schemas),
//   required = what every branch requires, and the alternatives said in the schema's description, so the model still
//   knows which properties go together ({action: "tap", x, y} | {action: "swipe", direction, distance?}).
// The rewrite accepts every input the original did (and some it did not: the description carries the rest).
// Branches may be $refs into the document, nullable or typeless objects, or combine objects again; a null branch of
// a union is left out (a call's input is never null). A branch that is not an object schema: undefined (the caller's 400).
// The work is bounded (schema-merge-budget.ts): a branch object (a $ref'd definition's branches among them) is merged
// once and reused wherever it is reached again, and past a limit SchemaTooComplex is thrown (the caller's 400).
import { rootRefResolved } from "./schema-root-ref.ts";
import { MERGE_LIMITS, newMergeWork, SchemaTooComplex, spend, visitBranch, type MergeWork } from "./schema-merge-budget.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

const COMBINATORS = ["allOf", "anyOf", "oneOf"] as const;
/** Keywords a typeless branch may hold and still be an object schema (it applies to the object root). */
const OBJECT_KEYWORDS = new Set([
  "properties", "required", "additionalProperties", "patternProperties", "propertyNames", "minProperties", "maxProperties",
  "dependentRequired", "dependentSchemas", "unevaluatedProperties", "title", "description", "$comment", "examples",
  "default", "$defs", "definitions", "$schema", "$id", "allOf", "anyOf", "oneOf",
]);

export const hasRootCombinator = (schema: Json): boolean => COMBINATORS.some((k) => schema[k] !== undefined);

/**
 * `schema` (an object schema) without allOf/anyOf/oneOf at its root; undefined when a branch is not an object.
 * Throws SchemaTooComplex past MERGE_LIMITS; `work` counts what was done.
 */
export function rootCombinatorsMerged(schema: Json, doc: unknown = schema, work: MergeWork = newMergeWork()): Json | undefined {
  return merged(schema, { doc, work, memo: new WeakMap(), byRef: new Map() }, 0);
}

/** One merge's state: the document $refs resolve in, the work done, each branch object's outcome once known. */
interface Run {
  doc: unknown;
  work: MergeWork;
  memo: WeakMap<object, Branch>;
  /** Branches that are only a $ref, by the $ref: k of them naming one definition merge it once. */
  byRef: Map<string, Branch>;
}
/** A branch object's outcome: merged (an object schema), null (left out of a union), or not an object. */
type Branch = { object: Json } | "null" | "not an object" | "in progress";

function merged(schema: Json, run: Run, depth: number): Json | undefined {
  if (depth > MERGE_LIMITS.depth) throw new SchemaTooComplex(`its unions are nested more than ${MERGE_LIMITS.depth} deep`);
  const { allOf, anyOf, oneOf, ...out } = schema;
  const notes: string[] = [];
  if (allOf !== undefined) {
    const branches = branchesOf(allOf, run, depth, false);
    if (!branches) return undefined;
    for (const b of branches) both(out, b, run.work);
  }
  for (const [kind, list] of [["anyOf", anyOf], ["oneOf", oneOf]] as const) {
    if (list === undefined) continue;
    const branches = branchesOf(list, run, depth, true);
    if (!branches) return undefined;
    both(out, union(branches, run.work), run.work);
    notes.push(`${kind === "oneOf" ? "Exactly one" : "At least one"} of these shapes (? = optional): ${branches.map(shape).join(" | ")}`);
  }
  if (notes.length) out.description = [out.description, ...notes].filter((d) => typeof d === "string" && d).join("\n");
  return out;
}

/** The branches of a combinator as object schemas without root combinators (their `type` left out); undefined if one is not. */
function branchesOf(list: unknown, run: Run, depth: number, skipNull: boolean): Json[] | undefined {
  if (!Array.isArray(list) || !list.length) return undefined;
  const out: Json[] = [];
  for (const raw of list) {
    visitBranch(run.work);
    const b = branchOf(raw, run, depth);
    if (b === "null" && skipNull) continue;
    if (typeof b !== "object") return undefined;
    out.push(b.object);
  }
  return out.length ? out : undefined;
}

/** One branch merged, once: the same object reached again (a definition $ref'd from many places) is not merged again. */
function branchOf(raw: unknown, run: Run, depth: number): Branch {
  if (!isObj(raw)) return raw === true ? { object: {} } : "not an object";
  const ref = typeof raw.$ref === "string" && Object.keys(raw).length === 1 ? raw.$ref : undefined;
  const known = ref !== undefined ? run.byRef.get(ref) : run.memo.get(raw);
  if (known === "in progress") throw new SchemaTooComplex("a branch refers to itself");
  if (known) return known;
  const remember = (b: Branch) => (ref !== undefined ? run.byRef.set(ref, b) : run.memo.set(raw, b));
  remember("in progress");
  const outcome = branchMerged(raw, run, depth);
  remember(outcome);
  return outcome;
}

function branchMerged(raw: Json, run: Run, depth: number): Branch {
  const b = rootRefResolved(raw, run.doc);
  if (!isObj(b)) return "not an object";
  const keys = Object.keys(b);
  spend(run.work, keys.length);
  if (b.type === "null" || (Array.isArray(b.type) && b.type.length === 1 && b.type[0] === "null")) return "null";
  const type = b.type;
  const object = type === "object" || (Array.isArray(type) && type.includes("object")) || (type === undefined && keys.every((k) => OBJECT_KEYWORDS.has(k)));
  if (!object) return "not an object";
  const { type: _, ...rest } = b;
  const flat = hasRootCombinator(rest) ? merged(rest, run, depth + 1) : rest;
  return flat ? { object: flat } : "not an object";
}

/** `into` also constrained by `b` (properties and required): what allOf means, for the keywords an object's input needs. */
function both(into: Json, b: Json, work: MergeWork): void {
  if (isObj(b.properties)) {
    const props: Json = { ...(isObj(into.properties) ? into.properties : {}) };
    for (const [name, s] of Object.entries(b.properties)) {
      spend(work, 1);
      props[name] = name in props && !same(props[name], s) ? { allOf: [props[name], s] } : s;
    }
    into.properties = props;
  }
  if (Array.isArray(b.required)) spend(work, b.required.length);
  if (Array.isArray(b.required) && b.required.length) into.required = [...new Set([...(Array.isArray(into.required) ? into.required : []), ...b.required])];
  if (into.additionalProperties === undefined && b.additionalProperties !== undefined) into.additionalProperties = b.additionalProperties;
}

/** One object schema accepting what any branch does: properties united, required by all, closed when all are. */
function union(branches: Json[], work: MergeWork): Json {
  const given = new Map<string, unknown[]>();
  for (const b of branches) {
    spend(work, requiredOf(b).length);
    for (const [name, s] of Object.entries(isObj(b.properties) ? b.properties : {})) {
      spend(work, 1);
      const seen = given.get(name) ?? [];
      if (!seen.some((t) => same(t, s))) seen.push(s);
      given.set(name, seen);
    }
  }
  const properties: Json = {};
  for (const [name, schemas] of given) properties[name] = schemas.length === 1 ? schemas[0] : { anyOf: schemas };
  const out: Json = { properties };
  const required = requiredOf(branches[0]!).filter((n) => branches.every((b) => requiredOf(b).includes(n)));
  if (required.length) out.required = required;
  if (branches.every((b) => b.additionalProperties === false)) out.additionalProperties = false;
  return out;
}

/** A branch in a line: its title, its properties, a constant's value shown, an optional one marked with ?. */
function shape(b: Json): string {
  const req = requiredOf(b);
  const names = Object.entries(isObj(b.properties) ? b.properties : {}).map(([name, s]) => {
    const value = isObj(s) ? (s.const !== undefined ? s.const : Array.isArray(s.enum) && s.enum.length === 1 ? s.enum[0] : undefined) : undefined;
    if (value !== undefined) return `${name}: ${JSON.stringify(value)}`;
    return req.includes(name) ? name : `${name}?`;
  });
  for (const name of req) if (!names.some((n) => n === name || n.startsWith(`${name}: `))) names.push(name);
  const title = typeof b.title === "string" && b.title ? `${b.title} ` : "";
  return `${title}{${names.join(", ")}}`;
}

const requiredOf = (b: Json): string[] => (Array.isArray(b.required) ? b.required.filter((n: unknown) => typeof n === "string") : []);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
