// The spec writes chat's structured output as `{type: json_schema, json_schema: <a JSON Schema>}`; OpenAI's API, and
// every SDK, as `{type: json_schema, json_schema: {name, schema, strict?}}`. A bare schema is read as the latter,
// named "response", before validation, so the validator, the translators and a native upstream see one shape.

/** Keywords that make an object a JSON Schema rather than OpenAI's {name, schema} wrapper. */
const SCHEMA_KEYWORDS = ["type", "properties", "items", "anyOf", "oneOf", "allOf", "$ref", "$schema", "enum", "const", "required"];

export function wrapBareJsonSchema(body: unknown): void {
  const rf = (body as { response_format?: { type?: unknown; json_schema?: unknown } } | null)?.response_format;
  const js = rf?.type === "json_schema" ? rf.json_schema : undefined;
  if (!js || typeof js !== "object" || Array.isArray(js) || "name" in js || "schema" in js) return;
  if (SCHEMA_KEYWORDS.some((k) => k in js)) rf!.json_schema = { name: "response", schema: js };
}
