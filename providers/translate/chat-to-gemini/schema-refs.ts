// JSON Schema's composition keywords, resolved before the schema is cut down to Gemini's subset (schema.ts):
// Gemini's Schema has no $ref/$defs, oneOf or allOf, and dropping them loses every nested model (Pydantic writes
// nested models as `{"$ref": "#/$defs/Addr"}`, an Optional one as `anyOf: [{$ref}, {type: "null"}]`). So:
// - a local $ref (`#/$defs/X`, `#/definitions/X`, any JSON pointer into the schema, `#` itself) is inlined, its
//   sibling keywords (a description) kept over the target's;
// - a recursive schema is inlined RECURSION_DEPTH levels deep; past that the recursion point is left untyped (any
//   value), with a description saying what it stands for, rather than cut short or looping;
// - oneOf -> anyOf (Gemini's only union); allOf -> one schema: properties merged, required joined;
// - a $ref that cannot be resolved (remote, dangling) is left untyped and described, as is anything past a total
//   budget of inlined references (a schema of shared definitions could otherwise grow exponentially).

/** How many times one reference may be open inside itself before the recursion point is left untyped. */
export const RECURSION_DEPTH = 3;
/** Most references inlined in one schema. */
const MAX_INLINED = 500;

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** The schema with local references inlined, oneOf as anyOf and allOf merged; the input is not changed. */
export function resolveRefs(schema: unknown): any {
  if (!isObj(schema)) return schema;
  const budget = { left: MAX_INLINED };
  return walk(schema, schema, [], budget);
}

function walk(s: unknown, root: Json, open: string[], budget: { left: number }): any {
  if (Array.isArray(s)) return s.map((v) => walk(v, root, open, budget));
  if (!isObj(s)) return s;
  if (typeof s.$ref === "string") return inline(s, root, open, budget);
  const out: Json = {};
  for (const k in s) {
    if (k === "$defs" || k === "definitions") continue; // inlined where used
    const v = s[k];
    if (k === "properties" || k === "patternProperties") {
      if (!isObj(v)) continue;
      const props: Json = {};
      for (const p in v) props[p] = walk(v[p], root, open, budget);
      out[k] = props;
    } else if (k === "enum" || k === "const" || k === "examples" || k === "default" || k === "required") out[k] = v; // values, not schemas
    else out[k] = walk(v, root, open, budget);
  }
  if (Array.isArray(out.oneOf)) {
    out.anyOf = Array.isArray(out.anyOf) ? out.anyOf : out.oneOf;
    delete out.oneOf;
  }
  if (Array.isArray(out.allOf)) {
    const parts = out.allOf;
    delete out.allOf;
    return merge([out, ...parts]);
  }
  return out;
}

function inline(s: Json, root: Json, open: string[], budget: { left: number }): any {
  const ref: string = s.$ref;
  const { $ref: _, ...siblings } = s;
  const here = walk(siblings, root, open, budget);
  const target = ref.startsWith("#") ? pointer(root, ref.slice(1)) : undefined;
  const name = ref.split("/").pop() || "the whole schema";
  if (target === undefined) return untyped(here, `(a ${ref} schema)`);
  if (open.filter((r) => r === ref).length >= RECURSION_DEPTH) return untyped(here, `(a ${name}, recursively: same shape as the enclosing ${name})`);
  if (budget.left-- <= 0) return untyped(here, `(a ${name})`);
  const resolved = walk(target, root, [...open, ref], budget);
  // The referencing site's own keywords (description, title) say more about this use than the definition's.
  return isObj(resolved) ? merge([here, resolved]) : resolved;
}

/** Any value: Gemini's Schema without a type; what it stands for goes in the description. */
function untyped(here: Json, note: string): Json {
  const description = [here.description, note].filter((d) => typeof d === "string" && d).join(" ");
  return { ...(typeof here.title === "string" ? { title: here.title } : {}), description };
}

/** A JSON pointer (RFC 6901, as in a URI fragment) into the root schema. */
function pointer(root: Json, path: string): unknown {
  let at: unknown = root;
  if (path === "") return root;
  for (const raw of path.split("/").slice(1)) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    if (Array.isArray(at)) at = at[Number(key)];
    else if (isObj(at)) at = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** allOf: one schema. Earlier keywords win, except properties (merged, a name in both merged again) and required (joined). */
function merge(list: unknown[]): Json {
  const out: Json = {};
  for (const s of list) {
    if (!isObj(s)) continue;
    for (const k in s) {
      const v = s[k];
      if (k === "properties" && isObj(v)) {
        const props: Json = { ...(out.properties ?? {}) };
        for (const p in v) props[p] = p in props ? merge([props[p], v[p]]) : v[p];
        out.properties = props;
      } else if (k === "required" && Array.isArray(v)) out.required = [...new Set([...(out.required ?? []), ...v])];
      else if (!(k in out)) out[k] = v;
    }
  }
  return out;
}
