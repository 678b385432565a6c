// Gemini's function and response schemas (an OpenAPI 3.0 subset: upper-case type names such as OBJECT, `nullable`,
// int64 limits as strings, `propertyOrdering`) -> the JSON Schema chat, Anthropic and Bedrock take.
const INT_KEYS = new Set(["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"]);

export function jsonSchemaOf(s: any): any {
  if (!s || typeof s !== "object" || Array.isArray(s)) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "nullable" || k === "propertyOrdering") continue;
    if (k === "type") {
      if (typeof v === "string" && v !== "TYPE_UNSPECIFIED") out.type = v.toLowerCase();
    } else if (k === "properties" && v && typeof v === "object") {
      const props: Record<string, unknown> = {};
      for (const [name, p] of Object.entries(v)) props[name] = jsonSchemaOf(p);
      out.properties = props;
    } else if (k === "items") out.items = jsonSchemaOf(v);
    else if (k === "anyOf" && Array.isArray(v)) out.anyOf = v.map(jsonSchemaOf);
    else if (INT_KEYS.has(k) && typeof v === "string" && /^\d+$/.test(v)) out[k] = Number(v);
    else out[k] = v;
  }
  if (s.nullable === true) allowNull(out);
  return out;
}

/** Gemini's `nullable: true` in JSON Schema: null beside the type, the union's branches and the enum's values. */
function allowNull(out: Record<string, unknown>): void {
  if (typeof out.type === "string") out.type = [out.type, "null"];
  else if (out.type === undefined && Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: "null" }];
  // Pydantic's Optional[Literal[...]] arrives as enum + nullable: a JSON Schema enum without null refuses null.
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
}
