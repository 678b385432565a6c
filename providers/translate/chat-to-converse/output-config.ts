// response_format on Converse for models other than Claude: Bedrock's structured outputs (GA February 2026), asked in
// `outputConfig.textFormat` ({type: "json_schema", structure: {jsonSchema: {schema, name?, description?}}}, schema a
// JSON *string*) and answered as ordinary text, which the response translators pass through. Bedrock offers it on
// select models (Claude 4.5+, and some Qwen, DeepSeek, Mistral, Gemma, Nemotron, MiniMax, Kimi, gpt-oss...): a model
// without it refuses the request, and that 400 reaches the client rather than prose it did not ask for. json_object has
// no schema to send (Bedrock constrains to a schema, and an open object is not one it documents): dropped, named.

/** The outputConfig for `body`'s response_format; undefined when there is none to send (a JSON ask left out is named). */
export function converseOutputConfig(body: any, dropped: string[]): Record<string, unknown> | undefined {
  const rf = body.response_format;
  const js = rf?.type === "json_schema" ? rf.json_schema : undefined;
  if (!js || !js.schema || typeof js.schema !== "object") {
    // Plain text is what comes anyway: only a JSON ask goes unhonoured.
    if (rf !== undefined && rf !== null && rf !== false && rf?.type !== "text") dropped.push("response_format");
    return undefined;
  }
  // Constrained decoding: the schema is enforced whatever `strict` says, so strict is honoured and nothing is named.
  const jsonSchema: Record<string, unknown> = { schema: JSON.stringify(js.schema) };
  if (typeof js.name === "string" && js.name) jsonSchema.name = js.name;
  if (typeof js.description === "string" && js.description) jsonSchema.description = js.description;
  return { textFormat: { type: "json_schema", structure: { jsonSchema } } };
}
