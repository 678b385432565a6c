// The fake upstreams' "structured output": a value that matches a JSON Schema (or Gemini's OpenAPI subset), so a
// fake asked for JSON answers JSON the client's parser accepts, and prose otherwise.
export function sampleFor(schema: any, root: any = schema, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 8) return null;
  if (typeof schema.$ref === "string") {
    const path = schema.$ref.replace(/^#\//, "").split("/");
    return sampleFor(path.reduce((o: any, k: string) => o?.[k], root), root, depth + 1);
  }
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  const alt = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alt) && alt.length) return sampleFor(alt[0], root, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (String(type ?? (schema.properties ? "object" : "string")).toLowerCase()) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = sampleFor(v, root, depth + 1);
      return out;
    }
    case "array": return [sampleFor(schema.items ?? {}, root, depth + 1)];
    case "integer": return schema.minimum ?? 4;
    case "number": return schema.minimum ?? 4.5;
    case "boolean": return true;
    case "null": return null;
    default: return "sample";
  }
}

/** A fake tool call's input: `base`, plus a sample for every required property of the tool's schema it lacks. */
export function toolInput(schema: any, base: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const k of Array.isArray(schema?.required) ? schema.required : []) {
    if (!(k in out)) out[k] = sampleFor(schema.properties?.[k] ?? {}, schema);
  }
  return out;
}
