// response_format on Converse for models other than Claude: Bedrock's structured outputs (GA February 2026), asked in
// `outputConfig.textFormat` ({type: "json_schema", structure: {jsonSchema: {schema, name?, description?}}}, schema a
// JSON *string*) and answered as ordinary text, which the response translators pass through. Bedrock offers it on
// select models only (structured-output-models.ts): a model without it would refuse the whole request, so there
// response_format is dropped and named, and the model answers as it did before structured outputs. json_object has no
// schema to send (Bedrock constrains to a schema, and an open object is not one it documents): dropped, named.
import { takesStructuredOutputs } from "./structured-output-models.ts";

/** The outputConfig for `body`'s response_format to `upstreamModel`; undefined when there is none to send (a JSON ask
 * left out is named). */
export function converseOutputConfig(body: any, upstreamModel: string, dropped: string[]): Record<string, unknown> | undefined {
  const rf = body.response_format;
  const js = rf?.type === "json_schema" ? rf.json_schema : undefined;
  if (!js || !js.schema || typeof js.schema !== "object" || !takesStructuredOutputs(upstreamModel)) {
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
