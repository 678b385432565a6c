import { describe, expect, it } from "vitest";
import { camelCaseGeminiFields } from "./field-names.ts";
import { GatewayError } from "../../errors.ts";

describe("camelCaseGeminiFields", () => {
  it("renames proto (snake_case) field names at every depth, as the Gemini API reads them", () => {
    const body: any = {
      system_instruction: { parts: [{ text: "Be brief" }] },
      contents: [{ role: "user", parts: [{ inline_data: { mime_type: "image/png", data: "AA==" } }, { file_data: { file_uri: "https://x/y.pdf", mime_type: "application/pdf" } }] }],
      generation_config: { max_output_tokens: 7, stop_sequences: ["x"], thinking_config: { thinking_budget: 0, include_thoughts: true }, response_mime_type: "application/json" },
      tool_config: { function_calling_config: { mode: "ANY", allowed_function_names: ["get_weather"] } },
      safety_settings: [],
      cached_content: "cachedContents/abc",
    };
    camelCaseGeminiFields(body);
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: "Be brief" }] },
      contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AA==" } }, { fileData: { fileUri: "https://x/y.pdf", mimeType: "application/pdf" } }] }],
      generationConfig: { maxOutputTokens: 7, stopSequences: ["x"], thinkingConfig: { thinkingBudget: 0, includeThoughts: true }, responseMimeType: "application/json" },
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
      safetySettings: [],
      cachedContent: "cachedContents/abc",
    });
  });

  it("keeps the client's own keys: call args, function responses, JSON Schema values, property names, labels, providerOptions", () => {
    const body: any = {
      contents: [
        { role: "model", parts: [{ function_call: { name: "get_weather", args: { city_name: "Paris", unit_system: { is_metric: true } } } }] },
        { role: "user", parts: [{ function_response: { name: "get_weather", response: { temp_c: 21, feels_like: { temp_c: 20 } } } }] },
      ],
      tools: [{
        function_declarations: [
          { name: "get_weather", parameters: { type: "OBJECT", properties: { city_name: { type: "STRING", max_length: "40" } }, required: ["city_name"], property_ordering: ["city_name"] }, response: { type: "OBJECT", properties: { temp_c: { type: "NUMBER" } } } },
          { name: "lookup", parameters_json_schema: { type: "object", properties: { order_id: { type: "string" } }, additionalProperties: false } },
        ],
      }],
      generation_config: { response_json_schema: { properties: { snake_key: { type: "string" } } } },
      labels: { cost_center: "r_and_d" },
      providerOptions: { my_provider: { some_knob: 1 } },
    };
    camelCaseGeminiFields(body);
    expect(body.contents[0].parts[0]).toEqual({ functionCall: { name: "get_weather", args: { city_name: "Paris", unit_system: { is_metric: true } } } });
    expect(body.contents[1].parts[0]).toEqual({ functionResponse: { name: "get_weather", response: { temp_c: 21, feels_like: { temp_c: 20 } } } });
    const [weather, lookup] = body.tools[0].functionDeclarations;
    expect(weather.parameters).toEqual({ type: "OBJECT", properties: { city_name: { type: "STRING", maxLength: "40" } }, required: ["city_name"], propertyOrdering: ["city_name"] });
    expect(weather.response).toEqual({ type: "OBJECT", properties: { temp_c: { type: "NUMBER" } } });
    expect(lookup.parametersJsonSchema).toEqual({ type: "object", properties: { order_id: { type: "string" } }, additionalProperties: false });
    expect(body.generationConfig.responseJsonSchema).toEqual({ properties: { snake_key: { type: "string" } } });
    expect(body.labels).toEqual({ cost_center: "r_and_d" });
    expect(body.providerOptions).toEqual({ my_provider: { some_knob: 1 } });
  });

  it("countTokens and batch embeddings nest requests: renamed inside them too", () => {
    const count: any = { generate_content_request: { model: "models/x", system_instruction: { parts: [{ text: "s" }] }, contents: [] } };
    camelCaseGeminiFields(count);
    expect(count).toEqual({ generateContentRequest: { model: "models/x", systemInstruction: { parts: [{ text: "s" }] }, contents: [] } });
    const batch: any = { requests: [{ content: { parts: [{ text: "a" }] }, task_type: "RETRIEVAL_QUERY", output_dimensionality: 8 }] };
    camelCaseGeminiFields(batch);
    expect(batch.requests[0]).toEqual({ content: { parts: [{ text: "a" }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 8 });
  });

  it("both spellings of one field is a 400 naming it", () => {
    const body = { generationConfig: { maxOutputTokens: 5, max_output_tokens: 9 } };
    const err = (() => { try { camelCaseGeminiFields(body); } catch (e) { return e; } })() as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(400);
    expect(err.details?.field).toBe("generationConfig.max_output_tokens");
    expect(err.message).toContain("generationConfig.maxOutputTokens");
  });

  it("a body nested 100 000 levels deep is walked without exhausting the stack; non-objects are left alone", () => {
    let deep: any = { text: "x" };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const body: any = { contents: deep, leading_: 1, _private_x: 2 };
    expect(() => camelCaseGeminiFields(body)).not.toThrow();
    expect(Object.keys(body)).toEqual(["contents", "leading_", "_private_x"]);
    for (const v of [null, "s", 3, [1, 2]]) expect(() => camelCaseGeminiFields(v)).not.toThrow();
  });
});
