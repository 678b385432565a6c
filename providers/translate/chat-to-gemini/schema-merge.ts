// allOf (and a $ref's sibling keywords) as one schema, for Gemini's Schema, which has no allOf: a value must match
// every part, so constraints are intersected, not picked:
// - properties: the union, a name in several parts merged again; required: joined; items: merged (recursively);
// - enum / const: the values in every part; type: the types in every part (integer within number is integer);
// - minimum, minLength, minItems: the largest; maximum, maxLength, maxItems: the smallest;
// - annotations (description, title): the first part's;
// - what Gemini's subset cannot say as one keyword (two anyOf unions, two patterns, two formats, enums or types
//   with nothing in common) keeps the first part's and says the other in the description ("must also match …"),
//   so the model still sees it.

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

const LARGEST = new Set(["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"]);
const SMALLEST = new Set(["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"]);

/** The schemas in `list` as one; `spend` is charged every note added to a description. */
export function mergeAll(list: readonly unknown[], spend: (note: string) => void = () => {}): Json {
  let out: Json = {};
  for (const s of list) if (isObj(s)) out = merge(out, s, spend);
  return out;
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
/** const as a one-value enum, so enum and const intersect alike. */
const valuesOf = (s: Json): unknown[] | undefined => (Array.isArray(s.enum) ? s.enum : "const" in s ? [s.const] : undefined);
const typesOf = (t: unknown): string[] | undefined => (typeof t === "string" ? [t] : Array.isArray(t) ? t.filter((x) => typeof x === "string") : undefined);

function merge(a: Json, b: Json, spend: (note: string) => void): Json {
  const out: Json = { ...a };
  const lost: string[] = [];
  const keep = (k: string, v: unknown) => lost.push(`${k} ${JSON.stringify(v)}`);
  for (const k in b) {
    const v = b[k];
    if (k === "enum" || k === "const") continue; // below, together
    if (!(k in out)) {
      out[k] = v;
      continue;
    }
    const was = out[k];
    if (k === "properties" && isObj(was) && isObj(v)) {
      const props: Json = { ...was };
      for (const p in v) props[p] = isObj(props[p]) && isObj(v[p]) ? merge(props[p], v[p], spend) : p in props ? props[p] : v[p];
      out.properties = props;
    } else if (k === "required" && Array.isArray(was) && Array.isArray(v)) out.required = [...new Set([...was, ...v])];
    else if (k === "propertyOrdering" && Array.isArray(was) && Array.isArray(v)) out.propertyOrdering = [...new Set([...was, ...v])];
    else if (k === "items" && isObj(was) && isObj(v)) out.items = merge(was, v, spend);
    else if (LARGEST.has(k) && typeof was === "number" && typeof v === "number") out[k] = Math.max(was, v);
    else if (SMALLEST.has(k) && typeof was === "number" && typeof v === "number") out[k] = Math.min(was, v);
    else if (k === "nullable") out.nullable = was === true && v === true;
    else if (k === "type") {
      const ta = typesOf(was), tb = typesOf(v);
      if (!ta || !tb) continue;
      const both = ta.flatMap((t) => (tb.includes(t) ? [t] : t === "number" && tb.includes("integer") ? ["integer"] : t === "integer" && tb.includes("number") ? [t] : []));
      if (!both.length) keep("type", v);
      else out.type = both.length === 1 ? both[0] : both;
    } else if (k === "anyOf" || k === "pattern" || k === "format" || k === "items" || k === "properties") {
      if (!same(was, v)) keep(k, v);
    }
    // Anything else (description, title, keywords Gemini drops anyway): the first part's.
  }
  const va = valuesOf(a), vb = valuesOf(b);
  if (vb) {
    const both = va ? va.filter((x) => vb.some((y) => same(x, y))) : vb;
    if (va && !both.length) keep(Array.isArray(b.enum) ? "enum" : "const", Array.isArray(b.enum) ? b.enum : b.const);
    else {
      delete out.const;
      out.enum = both;
    }
  }
  if (lost.length) {
    const note = `(must also match: ${lost.join("; ")})`;
    spend(note);
    out.description = [out.description, note].filter((d) => typeof d === "string" && d).join(" ");
  }
  return out;
}
