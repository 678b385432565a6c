// JSON Schema's composition keywords, resolved before the schema is cut down to Gemini's subset (schema.ts):
// Gemini's Schema has no $ref/$defs, oneOf or allOf, and dropping them loses every nested model (Pydantic writes
// nested models as `{"$ref": "#/$defs/Addr"}`, an Optional one as `anyOf: [{$ref}, {type: "null"}]`). So:
// - a local $ref (`#/$defs/X`, `#/definitions/X`, any JSON pointer into the schema, `#` itself) is inlined, its
//   sibling keywords combined with the target's as allOf would (the site's description and title win);
// - a recursive schema is inlined RECURSION_DEPTH levels deep; past that the recursion point is left untyped (any
//   value), with a description saying what it stands for, rather than cut short or looping;
// - oneOf -> anyOf (Gemini's only union); allOf -> one schema (schema-merge.ts);
// - a $ref that cannot be resolved (remote, dangling) is left untyped and described.
// Inlining copies: a small schema referencing one big definition many times (or definitions referencing each other
// twice per level) grows without bound, and nesting that exists only after inlining escapes the request's depth
// check. So the OUTPUT is bounded: all the schemas of one request together at most MAX_SCHEMA_CHARS of JSON, each
// at most MAX_JSON_DEPTH levels deep and MAX_JSON_DEPTH references inside one another; past that a 400 names the
// field (a schema silently cut short would change what structured output or a tool call may contain).
// The WORK is bounded too, not only the output: a reference's text may be as long as the request (a 400 KB key in
// "#/$defs/<key>/N"), and a recursive one is met thousands of times. Each distinct reference is resolved once per
// schema and each reference site looked up once (Refs), so a use costs the same whatever the reference says.
import { invalidRequest } from "../../../core/errors.ts";
import { MAX_JSON_DEPTH } from "../../../core/http/json-shape.ts";
import { mergeAll } from "./schema-merge.ts";
import { localRef } from "../json-pointer.ts";

/** How many times one reference may be open inside itself before the recursion point is left untyped. */
export const RECURSION_DEPTH = 3;
/** Most JSON (characters, roughly) the schemas of one request may grow to once references are inlined. */
export const MAX_SCHEMA_CHARS = 2 * 1024 * 1024;

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** What the schemas of one request may still add to the body sent to Gemini (shared by all of them). */
export interface SchemaBudget { left: number }
export const schemaBudget = (): SchemaBudget => ({ left: MAX_SCHEMA_CHARS });

/** One distinct reference of a schema, resolved once. */
interface Ref {
  /** What it points at; undefined when it cannot be resolved (remote, dangling). */
  target: unknown;
  /** Its last segment, naming it in a description. */
  name: string;
}

interface Walk {
  root: Json;
  budget: SchemaBudget;
  /** The client's field holding the schema, for a refusal. */
  field: string;
  /** Each distinct reference text, resolved: the pointer walk and its decoding run once, not once per use. */
  byText: Map<string, Ref>;
  /** Each {$ref} node of the input, looked up: a use compares no reference text (hashing or comparing a long one costs its length). */
  byNode: Map<Json, Ref>;
}

/** The schema with local references inlined, oneOf as anyOf and allOf merged; the input is not changed. */
export function resolveRefs(schema: unknown, field = "schema", budget: SchemaBudget = schemaBudget()): any {
  if (!isObj(schema)) return schema;
  const w: Walk = { root: schema, budget, field, byText: new Map(), byNode: new Map() };
  return walk(schema, w, [], 0);
}

/** Charges `chars` of output to the request's budget: a 400 once it is spent. */
export function spend(w: { budget: SchemaBudget; field: string }, chars: number): void {
  w.budget.left -= chars;
  if (w.budget.left < 0) {
    throw invalidRequest(`${w.field} is too large once its $refs are inlined (Gemini's Schema has no $ref): the schemas of one request may expand to at most ${MAX_SCHEMA_CHARS / 1024 / 1024} MiB of JSON; reference fewer or smaller definitions`, w.field, { reason: "schema_too_large", max_chars: MAX_SCHEMA_CHARS });
  }
}

function tooDeep(w: Walk, what: string): never {
  throw invalidRequest(`${w.field} ${what} (Gemini's Schema has no $ref: references are inlined)`, w.field, { reason: "schema_too_deep", max_depth: MAX_JSON_DEPTH });
}

const size = (v: unknown): number => (typeof v === "string" ? v.length + 3 : v !== null && typeof v === "object" ? JSON.stringify(v).length : 6);

/** depth: how deep `s` sits in the output schema (JSON levels), which inlining can make deeper than in the input. */
function walk(s: unknown, w: Walk, open: Ref[], depth: number): any {
  if (Array.isArray(s)) {
    if (depth >= MAX_JSON_DEPTH) tooDeep(w, `nests deeper than ${MAX_JSON_DEPTH} levels once its $refs are inlined`);
    spend(w, 2 + s.length);
    return s.map((v) => walk(v, w, open, depth + 1));
  }
  if (!isObj(s)) {
    spend(w, size(s));
    return s;
  }
  if (depth >= MAX_JSON_DEPTH) tooDeep(w, `nests deeper than ${MAX_JSON_DEPTH} levels once its $refs are inlined`);
  if (typeof s.$ref === "string") return inline(s, w, open, depth);
  const out: Json = {};
  spend(w, 2);
  for (const k in s) {
    if (k === "$defs" || k === "definitions") continue; // inlined where used
    const v = s[k];
    if (k === "examples" || k === "default") continue; // never sent (schema.ts), so never copied
    spend(w, k.length + 4);
    if (k === "properties" || k === "patternProperties") {
      if (!isObj(v)) continue;
      const props: Json = {};
      for (const p in v) {
        spend(w, p.length + 4);
        props[p] = walk(v[p], w, open, depth + 2);
      }
      out[k] = props;
    } else if (k === "enum" || k === "const" || k === "required") {
      spend(w, size(v)); // values, not schemas: shared with the input, but each copy is sent
      out[k] = v;
    } else out[k] = walk(v, w, open, depth + 1);
  }
  const parts: unknown[] = Array.isArray(out.allOf) ? out.allOf : [];
  delete out.allOf;
  if (Array.isArray(out.oneOf)) {
    // Both unions at once: the value must match one of each (as allOf of the two).
    if (Array.isArray(out.anyOf)) parts.push({ anyOf: out.oneOf });
    else out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  return parts.length ? mergeAll([out, ...parts], (note) => spend(w, note.length)) : out;
}

function inline(s: Json, w: Walk, open: Ref[], depth: number): any {
  const ref = lookUp(s, w);
  const { $ref: _, ...siblings } = s;
  // A chain of references nests calls without nesting the output: bounded too (the stack is).
  if (open.length >= MAX_JSON_DEPTH) tooDeep(w, `has more than ${MAX_JSON_DEPTH} $refs inside one another`);
  const here = walk(siblings, w, open, depth);
  if (ref.target === undefined) return untyped(w, here, `(a ${s.$ref} schema)`);
  if (open.filter((r) => r === ref).length >= RECURSION_DEPTH) return untyped(w, here, `(a ${ref.name}, recursively: same shape as the enclosing ${ref.name})`);
  const resolved = walk(ref.target, w, [...open, ref], depth);
  // The referencing site's own keywords (description, title) say more about this use than the definition's.
  return isObj(resolved) ? mergeAll([here, resolved], (note) => spend(w, note.length)) : resolved;
}

/** The reference `s` makes, resolved the first time its node or its text is met. */
function lookUp(s: Json, w: Walk): Ref {
  let ref = w.byNode.get(s);
  if (ref) return ref;
  const text: string = s.$ref;
  ref = w.byText.get(text);
  if (!ref) {
    ref = { target: localRef(w.root, text), name: text.slice(text.lastIndexOf("/") + 1) || "the whole schema" };
    w.byText.set(text, ref);
  }
  w.byNode.set(s, ref);
  return ref;
}

/** Any value: Gemini's Schema without a type; what it stands for goes in the description. */
function untyped(w: Walk, here: Json, note: string): Json {
  spend(w, note.length + 20);
  const description = [here.description, note].filter((d) => typeof d === "string" && d).join(" ");
  return { ...(typeof here.title === "string" ? { title: here.title } : {}), description };
}
