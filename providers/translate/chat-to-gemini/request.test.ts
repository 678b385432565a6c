import { describe, expect, it } from "vitest";
import { chatToGeminiRequest } from "./request.ts";
import { toolCallId } from "./response.ts";
import { schemaError } from "../../../test/upstreams/gemini-schema.ts";

const target = { modelId: "google/g", provider: "gem", upstreamModel: "g", pricing: {} } as any;
const call = (id: string, name: string) => ({ id, type: "function", function: { name, arguments: "{}" } });

describe("chat -> gemini: function calls Gemini did not sign", () => {
  it("the first call of a model turn gets Google's placeholder signature (Gemini refuses an unsigned replayed call)", () => {
    // A call made by another model (a fallback, a model switch) or by a stateless client: no signature in its id.
    const { body } = chatToGeminiRequest({ messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: "Let me look.", tool_calls: [call("call_a", "f"), call("call_b", "g")] },
      { role: "tool", tool_call_id: "call_a", content: "A" },
      { role: "tool", tool_call_id: "call_b", content: "B" },
    ] }, target);
    expect((body.contents as any)[1].parts).toEqual([
      { text: "Let me look." },
      { functionCall: { name: "f", args: {} }, thoughtSignature: "skip_thought_signature_validator" },
      { functionCall: { name: "g", args: {} } },
    ]);
  });

  it("a call Gemini signed keeps its own signature", () => {
    const id = toolCallId({ functionCall: {}, thoughtSignature: "c2ln" });
    const { body } = chatToGeminiRequest({ messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [call(id, "f")] },
      { role: "tool", tool_call_id: id, content: "A" },
    ] }, target);
    expect((body.contents as any)[1].parts).toEqual([{ functionCall: { name: "f", args: {} }, thoughtSignature: "c2ln" }]);
  });
});

describe("chat -> gemini: prompt_cache_key", () => {
  it("Gemini has no cache routing key or retention: both are named dropped, not sent", () => {
    const t = chatToGeminiRequest({ messages: [{ role: "user", content: "hi" }], prompt_cache_key: "tenant-42", prompt_cache_retention: "24h" }, target);
    expect(t.dropped).toEqual(["prompt_cache_key", "prompt_cache_retention"]);
    expect(JSON.stringify(t.body)).not.toContain("tenant-42");
  });
});

describe("chat -> gemini: knobs Gemini has no counterpart for", () => {
  it("verbosity and service_tier are named dropped, not sent", () => {
    const t = chatToGeminiRequest({ messages: [{ role: "user", content: "hi" }], verbosity: "low", service_tier: "flex" }, target);
    expect(t.dropped).toEqual(["verbosity", "service_tier"]);
    expect(JSON.stringify(t.body)).not.toMatch(/flex|verbosity/);
  });

  it("prediction (Predicted Outputs) is named dropped, as on Anthropic: Gemini has no such hint", () => {
    const t = chatToGeminiRequest({ messages: [{ role: "user", content: "fix the typo" }], prediction: { type: "content", content: "const x = 1;" } }, target);
    expect(t.dropped).toEqual(["prediction"]);
    expect(JSON.stringify(t.body)).not.toContain("const x = 1;");
    expect(chatToGeminiRequest({ messages: [{ role: "user", content: "hi" }], prediction: null }, target).dropped).toEqual([]);
  });
});

describe("chat -> gemini: image URLs", () => {
  const ask = (url: string) => chatToGeminiRequest({ messages: [{ role: "user", content: [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url } }] }] }, target);

  it("an https URL Gemini would refuse is left for the gateway to download, its field named", () => {
    const t = ask("https://upload.wikimedia.org/cat.png");
    expect(t.pending).toEqual([{ part: (t.body.contents as any)[0].parts[1], url: "https://upload.wikimedia.org/cat.png", field: "messages[0].content[1].image_url.url" }]);
  });

  it.each(["gs://bucket/cat.png", "https://generativelanguage.googleapis.com/v1beta/files/abc123", "https://www.youtube.com/watch?v=x"])("%s is Gemini's own: sent as fileData", (url) => {
    const t = ask(url);
    expect(t.pending).toEqual([]);
    expect((t.body.contents as any)[0].parts[1]).toEqual({ fileData: { mimeType: expect.any(String), fileUri: url } });
  });
});

describe("chat -> gemini: an assistant turn that was a refusal", () => {
  it("its refusal part (or refusal field with no content) goes as the model turn's text: the user turns around it stay apart", () => {
    const refusal = "I can't help with that.";
    for (const assistant of [{ role: "assistant", content: [{ type: "refusal", refusal }] }, { role: "assistant", content: null, refusal }]) {
      const { body } = chatToGeminiRequest({ messages: [{ role: "user", content: "x" }, assistant, { role: "user", content: "why?" }] }, target);
      expect(body.contents).toEqual([
        { role: "user", parts: [{ text: "x" }] },
        { role: "model", parts: [{ text: refusal }] },
        { role: "user", parts: [{ text: "why?" }] },
      ]);
    }
  });
});

describe("chat -> gemini: reasoning_effort none", () => {
  const pro = { modelId: "google/gemini-2.5-pro", provider: "gem", upstreamModel: "gemini-2.5-pro", pricing: {}, reasoning: true } as any;
  const ask = (body: Record<string, unknown>, t: any) => chatToGeminiRequest({ messages: [{ role: "user", content: "q" }], ...body }, t);

  it("on 2.5 Pro, which always thinks (Google refuses budget 0), is its least budget, 128, and the knob is named", () => {
    const r = ask({ reasoning_effort: "none" }, pro);
    expect((r.body.generationConfig as any).thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(r.dropped).toContain("reasoning_effort");
    const knob = ask({ providerOptions: { gem: { reasoningEffort: "none" } } }, pro);
    expect((knob.body.generationConfig as any).thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(knob.dropped).toContain("providerOptions.gem.reasoningEffort");
  });

  it("on a model that can turn thinking off it is budget 0, nothing named", () => {
    const r = ask({ reasoning_effort: "none" }, { ...pro, upstreamModel: "gemini-2.5-flash" });
    expect((r.body.generationConfig as any).thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(r.dropped).not.toContain("reasoning_effort");
  });
});


describe("chat -> gemini: a function's parameters whose root is a union or a map", () => {
  const declared = (parameters: unknown, to = { ...target, upstreamModel: "gemini-2.5-flash" }) => {
    const { body } = chatToGeminiRequest({ messages: [{ role: "user", content: "q" }], tools: [{ type: "function", function: { name: "f", parameters } }] }, to);
    return (body.tools as any)[0].functionDeclarations[0];
  };
  const byId = { type: "object", properties: { id: { type: "integer" } }, required: ["id"] };
  const byName = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

  it("a root anyOf of objects (a zod union) is one object: every branch's properties, none required, the shapes described", () => {
    for (const parameters of [{ anyOf: [byId, byName] }, { type: "object", anyOf: [byId, byName] }, { oneOf: [byId, byName] }]) {
      const fd = declared(parameters);
      expect(fd.parameters.type).toBe("object");
      expect(fd.parameters.properties).toEqual({ id: { type: "integer" }, name: { type: "string" } });
      expect(fd.parameters.required).toBeUndefined();
      expect(fd.parameters.description).toMatch(/one of these shapes \(\? = optional\): \{id\} \| \{name\}/);
      expect(schemaError({ tools: [{ functionDeclarations: [fd] }] })).toBeUndefined();
    }
  });

  it("what every branch requires stays required", () => {
    const fd = declared({ anyOf: [{ ...byId, properties: { ...byId.properties, op: { type: "string" } }, required: ["op", "id"] }, { ...byName, properties: { ...byName.properties, op: { type: "string" } }, required: ["op", "name"] }] });
    expect(fd.parameters.required).toEqual(["op"]);
  });

  it("a root allOf is one object with the parts' properties and required names", () => {
    const fd = declared({ allOf: [byId, byName] });
    expect(fd.parameters.properties).toEqual({ id: { type: "integer" }, name: { type: "string" } });
    expect(fd.parameters.required).toEqual(["id", "name"]);
  });

  it("a map (additionalProperties a schema, no properties) goes as parametersJsonSchema, the JSON Schema 2.5 models take, not as an object schema without properties", () => {
    const map = { type: "object", description: "Variables to set", additionalProperties: { type: "string" } };
    for (const upstreamModel of ["gemini-2.5-flash", "gemini-3-pro-preview", "gemini-flash-latest"]) {
      const fd = declared(map, { ...target, upstreamModel });
      expect(fd).toEqual({ name: "f", parametersJsonSchema: map });
      expect(schemaError({ tools: [{ functionDeclarations: [fd] }] })).toBeUndefined();
    }
    // A map beside named properties keeps `parameters` (its values said in the description).
    const named = declared({ type: "object", properties: { id: { type: "integer" } }, additionalProperties: { type: "string" } });
    expect(named.parameters).toEqual({ type: "object", properties: { id: { type: "integer" } }, description: '(additionalProperties: {"type":"string"})' });
  });

  it("a map to a model before 2.5 (which refuses parametersJsonSchema) goes without parameters, as before", () => {
    for (const upstreamModel of ["gemini-2.0-flash-001", "gemini-1.5-pro", "publishers/google/models/gemini-2.0-flash"]) {
      expect(declared({ type: "object", additionalProperties: { type: "string" } }, { ...target, upstreamModel })).toEqual({ name: "f" });
    }
  });

  it("a root allOf of if/then (x required in mode a) keeps both properties, the conditional said in the description, not a 400", () => {
    const fd = declared({ type: "object", properties: { mode: { type: "string", enum: ["a", "b"] }, x: { type: "string" } }, allOf: [{ if: { properties: { mode: { const: "a" } } }, then: { required: ["x"] } }] });
    expect(fd.parameters).toEqual({
      type: "object",
      properties: { mode: { type: "string", enum: ["a", "b"] }, x: { type: "string" } },
      description: '(if: {"properties":{"mode":{"const":"a"}}}) (then: {"required":["x"]})',
    });
    expect(schemaError({ tools: [{ functionDeclarations: [fd] }] })).toBeUndefined();
  });

  it("a root $ref beside type: object keeps the properties it points at", () => {
    const fd = declared({ type: "object", $ref: "#/$defs/Args", $defs: { Args: byId } });
    expect(fd.parameters.properties).toEqual({ id: { type: "integer" } });
  });

  it("a function that takes nothing still goes without parameters (Gemini refused an empty object)", () => {
    for (const parameters of [undefined, {}, { type: "object", properties: {} }, { type: "object", additionalProperties: false }]) expect(declared(parameters)).toEqual({ name: "f" });
  });

  it("a root union with a branch that is not an object is a 400 naming the field, as on Anthropic", () => {
    expect(() => declared({ anyOf: [byId, { type: "string" }] })).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ field: "tools[0].function.parameters" }) }));
  });
});
