// Anthropic refuses a tool whose input_schema has allOf, anyOf or oneOf at its root ("input_schema does not support
// oneOf, allOf, or anyOf at the top level"), and the whole request with it: one MCP tool written as a zod union breaks
// every request of an agent offering it. Such a root is rewritten as one object schema, the keywords beside the
// combinator kept:
// - allOf of objects: properties merged (a name two branches give differently: allOf of its schemas), required united,
//   a branch's other constraints (if/then, not, dependentRequired…) put on the root (schema-root-constraints.ts);
// - anyOf / oneOf of objects: properties united (a name several branches give differently: anyOf of its schemas),
//   required = what every branch requires, and the alternatives said in the schema's description, so the model still
//   knows which properties go together ({action: "tap", x, y} | {action: "swipe", direction, distance?}),
//   each distinct branch once and the note cut at 4 KB (advice to the model, not the schema).
// A property given differently by several branches (or nested unions) is ONE flat allOf / anyOf of its distinct schemas.
// The rewrite accepts every input the original did (and some it did not: the description carries the rest).
// Branches may be $refs into the document, nullable or typeless objects (a typeless branch of object keywords only:
// properties, required, if/then/else, not…), or combine objects again; a null branch of a union is left out (a call's
// input is never null). A branch that is not an object schema (another type, a const): undefined (the caller's 400).
// The work is bounded (schema-merge-budget.ts): a branch object (a $ref'd definition's branches among them) is merged
// once and reused wherever it is reached again, and past a limit SchemaTooComplex is thrown (the caller's 400).
// A $ref into the removed root combinator (zod-to-json-schema writes them) is kept resolving (schema-root-pointers.ts).
import { rootRefResolved } from "./schema-root-ref.ts";
import { rootCombinatorPointersRehomed } from "./schema-root-pointers.ts";
import { allOfConstraintsKept } from "./schema-root-constraints.ts";
import { MERGE_LIMITS, newMergeWork, SchemaTooComplex, spend, visitBranch, type MergeWork } from "./schema-merge-budget.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

const COMBINATORS = ["allOf", "anyOf", "oneOf"] as const;
/** Keywords a typeless branch may hold and still be an object schema (it applies to the object root). */
const OBJECT_KEYWORDS = new Set([
  "properties", "required", "additionalProperties", "patternProperties", "propertyNames", "minProperties", "maxProperties",
  "dependentRequired", "dependentSchemas", "unevaluatedProperties", "title", "description", "$comment", "examples",
  "default", "$defs", "definitions", "$schema", "$id", "allOf", "anyOf", "oneOf",
  // Constraints on the object that name no type: {"if": …, "then": {"required": ["x"]}}, {"not": …}.
  "if", "then", "else", "not", "dependencies",
]);

export const hasRootCombinator = (schema: Json): boolean => COMBINATORS.some((k) => schema[k] !== undefined);

/**
 * `schema` (an object schema) without allOf/anyOf/oneOf at its root; undefined when a branch is not an object.
 * Throws SchemaTooComplex past MERGE_LIMITS; `work` counts what was done.
 */
export function rootCombinatorsMerged(schema: Json, doc: unknown = schema, work: MergeWork = newMergeWork()): Json | undefined {
  const out = merged(schema, { doc, work, memo: new WeakMap(), byRef: new Map(), facts: new WeakMap(), ids: new Map(), made: new WeakMap() }, 0);
  return out && rootCombinatorPointersRehomed(out, doc, work);
}

/** One merge's state: the document $refs resolve in, the work done, each branch object's outcome once known. */
interface Run {
  doc: unknown;
  work: MergeWork;
  memo: WeakMap<object, Branch>;
  /** Branches that are only a $ref, by the $ref: k of them naming one definition merge it once. */
  byRef: Map<string, Branch>;
  /** Each property schema's fact, each read once. */
  facts: WeakMap<object, Fact>;
  ids: Map<string, string>;
  /** The allOf / anyOf lists this merge made (spread into a list of the same kind, never nested in it). */
  made: WeakMap<object, Kind>;
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
    allInto(out, branches, run);
    allOfConstraintsKept(out, branches, (v) => factOf(v, run).id);
  }
  for (const [kind, list] of [["anyOf", anyOf], ["oneOf", oneOf]] as const) {
    if (list === undefined) continue;
    const branches = branchesOf(list, run, depth, true);
    if (!branches) return undefined;
    allInto(out, [union(branches, run)], run);
    notes.push(shapesNote(`${kind === "oneOf" ? "Exactly one" : "At least one"} of these shapes (? = optional): `, branches));
  }
  if (notes.length) out.description = [out.description, ...notes].filter((d) => typeof d === "string" && d).join("\n");
  return out;
}

/**
 * The distinct branches of a combinator as object schemas without root combinators (their `type` left out); undefined
 * if one is not. A definition $ref'd by many branches is one branch: the same constraint twice changes no allOf or
 * anyOf, and its required names and shape are then read once, not once per $ref.
 */
function branchesOf(list: unknown, run: Run, depth: number, skipNull: boolean): Json[] | undefined {
  if (!Array.isArray(list) || !list.length) return undefined;
  const out = new Set<Json>();
  for (const raw of list) {
    visitBranch(run.work);
    const b = branchOf(raw, run, depth);
    if (b === "null" && skipNull) continue;
    if (typeof b !== "object") return undefined;
    out.add(b.object);
  }
  return out.size ? [...out] : undefined;
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

/**
 * `into` also constrained by each of `branches` (properties and required): what allOf means, for the keywords an
 * object's input needs. A property given differently is one flat allOf of its distinct schemas.
 */
function allInto(into: Json, branches: Json[], run: Run): void {
  const given = new Map<string, unknown[]>();
  const collect = (b: Json) => {
    for (const [name, s] of Object.entries(isObj(b.properties) ? b.properties : {})) {
      spend(run.work, 1);
      const seen = given.get(name);
      if (seen) seen.push(s);
      else given.set(name, [s]);
    }
  };
  collect(into);
  const required = new Set(requiredCounted(into, run));
  let withProperties = false;
  let withRequired = false;
  for (const b of branches) {
    withProperties ||= isObj(b.properties);
    collect(b);
    const names = requiredCounted(b, run);
    withRequired ||= names.length > 0;
    for (const name of names) required.add(name);
    if (into.additionalProperties === undefined && b.additionalProperties !== undefined) into.additionalProperties = b.additionalProperties;
  }
  if (withProperties) into.properties = propertiesOf(given, "allOf", run);
  if (withRequired) into.required = [...required];
}

/** One object schema accepting what any branch does: properties united (one flat anyOf each), required by all, closed when all are. */
function union(branches: Json[], run: Run): Json {
  const given = new Map<string, unknown[]>();
  for (const b of branches) {
    for (const [name, s] of Object.entries(isObj(b.properties) ? b.properties : {})) {
      spend(run.work, 1);
      const seen = given.get(name);
      if (seen) seen.push(s);
      else given.set(name, [s]);
    }
  }
  const out: Json = { properties: propertiesOf(given, "anyOf", run) };
  const byAll = branches.map((b) => new Set(requiredCounted(b, run)));
  const required = [...byAll[0]!].filter((n) => byAll.every((r) => r.has(n)));
  if (required.length) out.required = required;
  if (branches.every((b) => b.additionalProperties === false)) out.additionalProperties = false;
  return out;
}

/** Each property's schemas as one, combined by `kind`; past MERGE_LIMITS.bytes in all, the merge stops. */
function propertiesOf(given: Map<string, unknown[]>, kind: Kind, run: Run): Json {
  const properties: Json = {};
  let bytes = 0;
  for (const [name, schemas] of given) {
    const s = combined(kind, schemas, run);
    bytes += factOf(s, run).bytes;
    if (bytes > MERGE_LIMITS.bytes) throw tooBig();
    properties[name] = s;
  }
  return properties;
}

type Kind = "allOf" | "anyOf";
/** A schema as the merge compares and counts it: a short id equal for equal JSON, its size sent (each use counted). */
interface Fact {
  id: string;
  bytes: number;
}

/**
 * The distinct schemas of `schemas` as one: itself when one, else `{[kind]: [...]}`, flat: a list this merge made of
 * the same kind (a nested union's, a $ref'd definition's) is spread in, not nested. Compared by id in a Set: linear.
 */
function combined(kind: Kind, schemas: unknown[], run: Run): unknown {
  const list: unknown[] = [];
  const ids: string[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  for (const s of schemas) {
    for (const part of isObj(s) && run.made.get(s) === kind ? (s[kind] as unknown[]) : [s]) {
      spend(run.work, 1);
      const fact = factOf(part, run);
      if (seen.has(fact.id)) continue;
      seen.add(fact.id);
      ids.push(fact.id);
      list.push(part);
      bytes += fact.bytes + 1;
    }
  }
  if (list.length === 1) return list[0];
  if (bytes > MERGE_LIMITS.bytes) throw tooBig();
  const made = { [kind]: list };
  run.made.set(made, kind);
  run.facts.set(made, { id: idOf(`${kind}[${ids.join(",")}]`, run), bytes: bytes + kind.length + 6 });
  return made;
}

/** A client's schema's fact, read once (its JSON); a schema this merge made has its fact from its parts. */
function factOf(s: unknown, run: Run): Fact {
  const known = typeof s === "object" && s ? run.facts.get(s) : undefined;
  if (known) return known;
  let text: string;
  try {
    text = JSON.stringify(s) ?? "null";
  } catch (e) {
    // Nested deeper than the stack: never sent (its JSON could not be written).
    if (e instanceof RangeError) throw new SchemaTooComplex("a property's schema is nested too deep");
    throw e;
  }
  const fact = { id: idOf(text, run), bytes: text.length };
  if (typeof s === "object" && s) run.facts.set(s, fact);
  return fact;
}

/** A short id per distinct text (a JSON text never looks like the `allOf[…]` of a made list). */
function idOf(text: string, run: Run): string {
  let id = run.ids.get(text);
  if (id === undefined) run.ids.set(text, (id = `#${run.ids.size}`));
  return id;
}

const tooBig = () => new SchemaTooComplex(`its merged properties would be over ${MERGE_LIMITS.bytes} bytes (a schema shared by several branches counted at each use)`);

/**
 * The note listing the branches' shapes, at most NOTE_MAX characters (cut with "…"): advice to the model, not the
 * schema, so long property names or many branches must not make the request body grow with them.
 */
function shapesNote(lead: string, branches: Json[]): string {
  let note = lead;
  for (const [i, b] of branches.entries()) {
    if (note.length > NOTE_MAX) break;
    note += (i ? " | " : "") + shape(b, NOTE_MAX - note.length);
  }
  if (note.length <= NOTE_MAX) return note;
  let cut = NOTE_MAX - 1;
  if (/[\uD800-\uDBFF]/.test(note[cut - 1]!)) cut--; // not half a surrogate pair
  return `${note.slice(0, cut)}…`;
}
const NOTE_MAX = 4096;

/**
 * A branch in a line: its title, its properties, a short constant's value shown, an optional one marked with ?. Stops
 * once over `room` characters (the caller cuts it).
 */
function shape(b: Json, room: number): string {
  const req = new Set(requiredOf(b));
  const named = new Set<string>();
  const names: string[] = [];
  let length = 0;
  const add = (text: string) => {
    names.push(text);
    length += text.length + 2;
  };
  for (const [name, s] of Object.entries(isObj(b.properties) ? b.properties : {})) {
    if (length > room) break;
    named.add(name);
    const value = isObj(s) ? (s.const !== undefined ? s.const : Array.isArray(s.enum) && s.enum.length === 1 ? s.enum[0] : undefined) : undefined;
    if (isShort(value)) add(`${name}: ${JSON.stringify(value)}`);
    else add(req.has(name) ? name : `${name}?`);
  }
  for (const name of req) {
    if (length > room) break;
    if (!named.has(name)) add(name);
  }
  const title = typeof b.title === "string" && b.title ? `${b.title} ` : "";
  return `${title}{${names.join(", ")}}`;
}

/** A constant worth showing in a shape: a discriminator's value, not a document. */
const isShort = (v: unknown) => v === null || typeof v === "number" || typeof v === "boolean" || (typeof v === "string" && v.length <= 100);
/** `b`'s required names, counted in the merge's work before they are read (a client may list a million). */
function requiredCounted(b: Json, run: Run): string[] {
  if (Array.isArray(b.required)) spend(run.work, b.required.length);
  return requiredOf(b);
}
const requiredOf = (b: Json): string[] => (Array.isArray(b.required) ? b.required.filter((n: unknown) => typeof n === "string") : []);
