// JSON Schema -> the OpenAPI subset Gemini's Schema accepts (tool parameters, responseSchema). Besides unknown
// keywords, Gemini refuses (400) a `format` other than enum/date-time on strings, float/double on numbers and
// int32/int64 on integers (Claude Code's WebFetch `url` has format "uri": google-gemini/gemini-cli#3178), and an
// `enum` anywhere but on a string schema with string values. Such a format moves into the description; an enum of
// non-strings is dropped and listed in the description (turning it into strings would make the model send "1" where
// the client's tool expects 1); `const` becomes a one-value enum for strings. $ref/$defs, oneOf and allOf, which
// Gemini's Schema lacks, are resolved first (schema-refs.ts), so nested models keep their fields. A `type` list of
// several types becomes anyOf (schema-types.ts): Gemini's type is one value. Constraints its Schema has no keyword
// for (exclusiveMinimum, multipleOf, not, a map's additionalProperties…) are said in the description
// (schema-constraint-notes.ts).
import { resolveRefs, schemaBudget, spend, type SchemaBudget } from "./schema-refs.ts";
import { splitTypes } from "./schema-types.ts";
import { constraintNotes } from "./schema-constraint-notes.ts";

const SCHEMA_KEYS = new Set(["type", "format", "description", "nullable", "enum", "properties", "required", "items", "minItems", "maxItems", "minimum", "maximum", "anyOf", "propertyOrdering", "minLength", "maxLength", "pattern", "title"]);

/** The formats Gemini accepts, by (lower-case) type. */
export const GEMINI_FORMATS: Record<string, string[]> = { string: ["enum", "date-time"], number: ["float", "double"], integer: ["int32", "int64"] };

const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * JSON Schema -> Gemini's OpenAPI subset: references inlined, unknown keywords dropped, `type: [x, "null"]` -> `type: x, nullable`,
 * `type: [x, y]` -> `anyOf: [{type: x}, {type: y}]`.
 * `field` names the schema in a 400 (too large or too deep once inlined); `budget` is shared by a request's schemas.
 * reduce() needs no depth bound of its own: resolveRefs bounds the depth of what it returns.
 */
export function geminiSchema(s: any, field = "schema", budget: SchemaBudget = schemaBudget()): any {
  return reduce(resolveRefs(s, field, budget), (chars) => spend({ budget, field }, chars));
}

type Spend = (chars: number) => void;

function reduce(schema: any, charge: Spend): any {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const s = splitTypes(schema, charge);
  const out: Record<string, unknown> = {};
  for (const k in s) {
    if (!SCHEMA_KEYS.has(k) || k === "format" || k === "enum") continue;
    const v = s[k];
    if (k === "properties" && v && typeof v === "object") {
      const props: Record<string, unknown> = {};
      for (const p in v) props[p] = reduce(v[p], charge);
      out.properties = props;
    } else if (k === "items") out.items = reduce(v, charge);
    else if (k === "anyOf" && Array.isArray(v)) out.anyOf = union(v, out, charge);
    else if (k === "type" && Array.isArray(v)) {
      const types = v.filter((t) => t !== "null");
      out.type = types[0] ?? "string";
      if (types.length < v.length) out.nullable = true;
    } else out[k] = v;
  }
  const notes: string[] = [];
  values(s, out, notes);
  format(s.format, out, notes);
  for (const note of constraintNotes(s)) {
    charge(note.length + 1);
    notes.push(note);
  }
  if (notes.length) out.description = [out.description, ...notes].filter((d) => typeof d === "string" && d).join(" ");
  return out;
}

/** anyOf's branches reduced; a branch that is only a union (a split type list) is spliced in: one flat anyOf. */
function union(branches: unknown[], out: Record<string, unknown>, charge: Spend): unknown[] {
  return branches.flatMap((b) => {
    const r = reduce(b, charge);
    const keys = r && typeof r === "object" && !Array.isArray(r) ? Object.keys(r) : [];
    if (!Array.isArray(r?.anyOf) || keys.some((k) => k !== "anyOf" && k !== "nullable")) return [r];
    if (r.nullable === true) out.nullable = true;
    return r.anyOf;
  });
}

const typeOf = (out: Record<string, unknown>) => (typeof out.type === "string" ? out.type.toLowerCase() : undefined);

/** enum / const: kept as a string enum where the values are strings, else described. */
function values(s: any, out: Record<string, unknown>, notes: string[]): void {
  let list: unknown[] | undefined = Array.isArray(s.enum) ? s.enum : "const" in s ? [s.const] : undefined;
  if (!list) return;
  if (list.includes(null)) {
    out.nullable = true;
    list = list.filter((v) => v !== null);
  }
  if (!list.length) return;
  const type = typeOf(out);
  // A string schema, or an untyped one whose values are all strings (Gemini wants the type said).
  if (type === "string" || (type === undefined && list.every((v) => typeof v === "string"))) {
    if (type === undefined) out.type = "string";
    out.enum = list.map(show);
    return;
  }
  if (type === undefined && list.every((v) => typeof v === typeof list[0]) && ["number", "boolean"].includes(typeof list[0])) {
    out.type = typeof list[0] === "boolean" ? "boolean" : list.every((v) => Number.isInteger(v)) ? "integer" : "number";
  }
  notes.push(list.length === 1 ? `(must be ${show(list[0])})` : `(one of: ${list.map(show).join(", ")})`);
}

/** A format Gemini accepts for the type stays; another one is said in the description. */
function format(f: unknown, out: Record<string, unknown>, notes: string[]): void {
  if (typeof f !== "string" || !f) return;
  if (f === "enum" && !out.enum) return; // "enum" means nothing without the enum
  if (GEMINI_FORMATS[typeOf(out) ?? ""]?.includes(f)) out.format = f;
  else notes.push(`(format: ${f})`);
}
