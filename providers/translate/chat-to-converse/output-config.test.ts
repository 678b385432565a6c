// response_format on Converse for models other than Claude: Bedrock's structured outputs, outputConfig.textFormat with
// the client's schema as a JSON string (the API's JsonSchemaDefinition.schema is a String); json_object has no schema
// to send and stays dropped, named; so does any response_format to a model AWS does not list
// (structured-output-models.ts).
import { describe, expect, it } from "vitest";
import { chatToConverseRequest } from "./request.ts";
import type { Target } from "../../../core/contracts/provider.ts";

const target = (upstreamModel: string): Target => ({ modelId: "m", provider: "bedrock", upstreamModel, pricing: { output: "0.000001" } });
const gptOss = target("openai.gpt-oss-120b-1:0");
const mistral = target("mistral.mistral-large-3-675b-instruct");
const hi = [{ role: "user", content: "x" }];
const tr = (body: any, t = gptOss) => chatToConverseRequest({ model: "m", ...body }, t) as { body: any; dropped: string[]; jsonTool?: string };
const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };

describe("chat -> Converse, not Claude: response_format as outputConfig.textFormat", () => {
  it("json_schema: the schema as a JSON string, with its name and description; nothing dropped", () => {
    for (const t of [gptOss, mistral]) {
      const r = tr({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "count", description: "The count.", schema, strict: true } } }, t);
      expect(r.body.outputConfig).toEqual({ textFormat: { type: "json_schema", structure: { jsonSchema: { schema: JSON.stringify(schema), name: "count", description: "The count." } } } });
      expect(JSON.parse(r.body.outputConfig.textFormat.structure.jsonSchema.schema)).toEqual(schema);
      expect(r.dropped).toEqual([]);
      expect(r.body.toolConfig).toBeUndefined();
      expect(r.jsonTool).toBeUndefined();
    }
  });

  it("beside tools: the tools as usual and the outputConfig (Bedrock takes both in one request)", () => {
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }];
    const r = tr({ messages: hi, tools, tool_choice: "auto", response_format: { type: "json_schema", json_schema: { name: "count", schema } } });
    expect(r.body.toolConfig).toEqual({ tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: { type: "object", properties: {} } } } }], toolChoice: { auto: {} } });
    expect(r.body.outputConfig.textFormat.structure.jsonSchema).toEqual({ schema: JSON.stringify(schema), name: "count" });
  });

  it("json_object, or json_schema without a schema: no schema to send, dropped and named; text is no ask", () => {
    for (const response_format of [{ type: "json_object" }, { type: "json_schema", json_schema: { name: "x" } }]) {
      const r = tr({ messages: hi, response_format });
      expect(r.body.outputConfig).toBeUndefined();
      expect(r.dropped).toEqual(["response_format"]);
    }
    const text = tr({ messages: hi, response_format: { type: "text" } });
    expect(text.body.outputConfig).toBeUndefined();
    expect(text.dropped).toEqual([]);
  });

  it("a model AWS does not list for structured outputs (Nova, Llama 3 and 4) gets none: response_format dropped and named, as before", () => {
    for (const id of ["us.amazon.nova-pro-v1:0", "us.meta.llama3-3-70b-instruct-v1:0", "us.meta.llama4-scout-17b-instruct-v1:0"]) {
      const r = tr({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "count", schema, strict: true } } }, target(id));
      expect(r.body.outputConfig).toBeUndefined();
      expect(r.dropped).toEqual(["response_format"]);
      expect(r.jsonTool).toBeUndefined();
    }
  });

  it("Claude gets no outputConfig (its JSON goes through json_output, which every Claude on Bedrock takes)", () => {
    const r = tr({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "count", schema } } }, target("us.anthropic.claude-sonnet-4-5-20250929-v1:0"));
    expect(r.body.outputConfig).toBeUndefined();
    expect(r.jsonTool).toBe("json_output");
  });
});
