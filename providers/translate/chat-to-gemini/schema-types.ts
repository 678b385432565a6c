// A JSON Schema `type` list, for Gemini's Schema, whose `type` is one value (a list is a 400): keeping the first
// type would tell the model that a field which may be a number must be a string. So a list of two or more types
// besides "null" becomes anyOf, one branch per type, each with the keywords that apply to its type (properties and
// required to the object, items to the array, minimum to the number, minLength and pattern to the string, an enum's
// values by their own type, a format by the type it names); "null" becomes nullable: true on the union, and what
// describes the whole value (description, title) stays there too. "integer" beside "number" is within it (one number
// branch). One type besides "null" stays a type + nullable (schema.ts). A type list beside an anyOf must hold with
// every branch, so each branch is narrowed to the listed types: that copies keywords, and the copies are charged to
// the request's schema budget (schema-refs.ts) as inlining is.
import { mergeAll } from "./schema-merge.ts";

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

const NUMBER_KEYS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
/** The keywords that constrain only values of one type (JSON Schema's, whether or not Gemini keeps them). */
const KEYS_OF: Record<string, string[]> = {
  string: ["minLength", "maxLength", "pattern", "contentEncoding", "contentMediaType"],
  number: NUMBER_KEYS,
  integer: NUMBER_KEYS,
  array: ["items", "prefixItems", "additionalItems", "unevaluatedItems", "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems"],
  object: ["properties", "required", "propertyOrdering", "additionalProperties", "patternProperties", "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "dependencies"],
};
const TYPED_KEYS = new Set(Object.values(KEYS_OF).flat());
/** Formats of numbers; any other format is a string's. */
const NUMBER_FORMATS = new Set(["int32", "int64", "float", "double"]);

const typesOf = (t: unknown): string[] | undefined => (typeof t === "string" ? [t] : Array.isArray(t) ? t.filter((x) => typeof x === "string") : undefined);
const valuesOf = (s: Json): unknown[] | undefined => (Array.isArray(s.enum) ? s.enum : "const" in s ? [s.const] : undefined);

/** JSON Schema's type of a value ("integer" for whole numbers). */
function typeOfValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Whether a value of type `a` may be of type `b` (a whole number is a number). */
const within = (a: string, b: string) => a === b || (a === "integer" && b === "number");

/** Whether a schema (an anyOf branch) lets null through. */
function admitsNull(c: unknown): boolean {
  if (c === true) return true;
  if (!isObj(c)) return false;
  const values = valuesOf(c);
  if (values && !values.includes(null)) return false;
  const types = typesOf(c.type);
  return c.nullable === true || !types || types.includes("null");
}

/**
 * `s` with a type list of two or more types besides "null" as anyOf of single-typed schemas; another `s` unchanged
 * (but for "integer" beside "number", which is "number"). `spend` is charged what copying adds to the output.
 */
export function splitTypes(s: Json, spend: (chars: number) => void): Json {
  if (!Array.isArray(s.type)) return s;
  const listed: string[] = s.type.filter((t: unknown) => typeof t === "string");
  let types = [...new Set(listed.filter((t) => t !== "null"))];
  if (types.includes("number")) types = types.filter((t) => t !== "integer");
  const withNull = listed.includes("null");
  if (types.length === 0) return s;
  if (types.length === 1) {
    const changed = listed.filter((t) => t !== "null").length > 1; // duplicates, or integer within number
    return changed ? { ...s, type: withNull ? [types[0], "null"] : types[0] } : s;
  }

  const values = valuesOf(s);
  const format = typeof s.format === "string" && s.format ? s.format : undefined;
  const formatTypes = format === undefined ? [] : NUMBER_FORMATS.has(format) ? ["integer", "number"] : ["string"];
  const union: Json = {};
  for (const k in s) if (k !== "type" && k !== "enum" && k !== "const" && k !== "format" && k !== "anyOf" && !TYPED_KEYS.has(k)) union[k] = s[k];
  // A format no listed type has constrains nothing; kept on the union, schema.ts says it in the description.
  if (format !== undefined && !types.some((t) => formatTypes.includes(t))) union.format = format;

  const branches = types.flatMap((t) => {
    const b: Json = { type: t };
    for (const k of KEYS_OF[t] ?? []) if (k in s) b[k] = s[k];
    if (format !== undefined && formatTypes.includes(t)) b.format = format;
    if (values) {
      const mine = values.filter((v) => within(typeOfValue(v), t));
      if (!mine.length) return []; // no value of this type is allowed
      b.enum = mine;
    }
    return [b];
  });

  const clients: unknown[] | undefined = Array.isArray(s.anyOf) ? s.anyOf : undefined;
  let nullable = withNull && (!values || values.includes(null)) && (!clients || clients.some(admitsNull));
  if (s.nullable === true) nullable = true;
  if (nullable) union.nullable = true;
  else delete union.nullable;

  const anyOf = clients ? narrow(clients, branches, spend) : branches;
  if (!anyOf.length) {
    // No listed type has an allowed value: only null, or nothing (the enum is left for schema.ts to describe).
    if (!nullable) return values ? { ...union, enum: values } : union;
    const { nullable: _, ...rest } = union;
    return { ...rest, type: "null" };
  }
  if (anyOf.length === 1 && !clients) return { ...union, ...anyOf[0] };
  return { ...union, anyOf };
}

/** Each client branch, once per listed type it allows, with that type's keywords: both unions must hold. */
function narrow(clients: unknown[], branches: Json[], spend: (chars: number) => void): Json[] {
  const out = clients.flatMap((c) => {
    if (c === true) return branches;
    if (!isObj(c)) return [];
    const allowed = typesOf(c.type);
    return branches
      .filter((b) => !allowed || allowed.some((t) => within(t, b.type) || within(b.type, t)))
      .map((b) => mergeAll([keywordsFor(c, b.type), b], (note) => spend(note.length)));
  });
  const grown = JSON.stringify(out).length - JSON.stringify(clients).length - JSON.stringify(branches).length;
  if (grown > 0) spend(grown);
  return out;
}

/** `c` without the keywords of types other than `t` (a string branch needs no properties). */
function keywordsFor(c: Json, t: string): Json {
  const out: Json = {};
  for (const k in c) if (!TYPED_KEYS.has(k) || KEYS_OF[t]?.includes(k)) out[k] = c[k];
  return out;
}
