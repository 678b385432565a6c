// What the real Gemini API refuses in its own Schema (functionDeclarations' `parameters`, generationConfig's
// `responseSchema`; the JSON Schema fields `parametersJsonSchema` / `responseJsonSchema` are not checked), for the
// fake Gemini upstream: a `format` other than enum/date-time on a string, float/double on a number, int32/int64 on
// an integer (google-gemini/gemini-cli#3178), and an `enum` on anything but a string schema, or with a value that
// is not a string; a `type` list (its type is one value); and any keyword its Schema message does not have ($ref,
// $defs, oneOf, allOf, additionalProperties…: "Unknown name … Cannot find field"). Not shared with the gateway's translation (providers/translate/chat-to-gemini/schema.ts): the
// fake is the referee. Messages are the real API's.

const FORMATS: Record<string, [string, string]> = { STRING: ["enum", "date-time"], NUMBER: ["float", "double"], INTEGER: ["int32", "int64"] };

/** The fields of Gemini's Schema message (either JSON spelling). */
const FIELDS = new Set(["type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"]
  .flatMap((f) => [f, f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]));

function walk(s: any, path: string): string | undefined {
  if (!s || typeof s !== "object" || Array.isArray(s)) return undefined;
  const unknown = Object.keys(s).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) return `Invalid JSON payload received. Unknown name ${JSON.stringify(unknown)} at '${path}': Cannot find field.`;
  if (Array.isArray(s.type)) return `Invalid JSON payload received. Unknown name "type" at '${path}': Proto field is not repeating, cannot start list.`;
  const type = typeof s.type === "string" ? s.type.toUpperCase() : "TYPE_UNSPECIFIED";
  if (s.format !== undefined) {
    const ok = FORMATS[type];
    if (!ok) return `* GenerateContentRequest.${path}.format: format is only supported for NUMBER, INTEGER and STRING type`;
    if (!ok.includes(s.format)) return `* GenerateContentRequest.${path}.format: only '${ok[0]}' and '${ok[1]}' are supported for ${type} type`;
  }
  if (s.enum !== undefined) {
    if (type !== "STRING") return `* GenerateContentRequest.${path}.enum: only allowed for STRING type`;
    const bad = (Array.isArray(s.enum) ? s.enum : [s.enum]).findIndex((v: unknown) => typeof v !== "string");
    if (bad >= 0) return `Invalid value at '${path}.enum[${bad}]' (TYPE_STRING), ${JSON.stringify(s.enum[bad])}`;
  }
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const e = walk(v, `${path}.properties[${k}]`);
    if (e) return e;
  }
  const e = walk(s.items, `${path}.items`);
  if (e) return e;
  for (const [i, v] of (Array.isArray(s.anyOf) ? s.anyOf : []).entries()) {
    const e = walk(v, `${path}.any_of[${i}]`);
    if (e) return e;
  }
  return undefined;
}

/** The first schema in the request Gemini would refuse, as its 400 message; undefined when all pass. */
export function schemaError(body: any): string | undefined {
  for (const [t, tool] of (Array.isArray(body?.tools) ? body.tools : []).entries()) {
    for (const [d, decl] of (Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : []).entries()) {
      const e = walk(decl?.parameters, `tools[${t}].function_declarations[${d}].parameters`);
      if (e) return e;
    }
  }
  return walk(body?.generationConfig?.responseSchema, "generation_config.response_schema");
}
