// A tool whose parameters' root is a union (zod / MCP servers write anyOf there) or a map reaches a Gemini model with
// its arguments (audit r50): before, Gemini received the declaration without parameters (200, nothing named) and the
// model was told the tool takes none. A map goes as parametersJsonSchema (an object `parameters` without properties
// is what Gemini has refused); a root allOf of if/then is kept, described, not a 400. Constraints Gemini's Schema has
// no keyword for (exclusiveMinimum…) are said in the description. Asserted on the body the fake Gemini recorded; the
// fake refuses keywords the real one does not know.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const LIVE = testKey("gemini-tool-roots");
const model = "google/gemini-2.5-flash";
const auth = { authorization: `Bearer ${LIVE}` };
let gemini: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  gemini = await startFakeGemini();
  gw = await startTestGateway({
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { [model]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] } },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
  });
});
afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});
beforeEach(() => {
  gemini.requests.length = 0;
});

const byId = { type: "object", properties: { id: { type: "integer" } }, required: ["id"] };
const byName = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
const declarations = () => gemini.requests.at(-1)!.body.tools[0].functionDeclarations;

describe("tool parameters with a union or map root reach Gemini", () => {
  it("chat: a root anyOf is one object with both branches' properties, a map root an object describing its values", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "x" }], tools: [
      { type: "function", function: { name: "union_root", parameters: { anyOf: [byId, byName] } } },
      { type: "function", function: { name: "set_env", parameters: { type: "object", additionalProperties: { type: "string" } } } },
    ] }, auth);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-mg-dropped-params")).toBeNull();
    const [union, map] = declarations();
    expect(union.parameters).toMatchObject({ type: "object", properties: { id: { type: "integer" }, name: { type: "string" } } });
    expect(union.parameters.description).toContain("{id} | {name}");
    // Not an object `parameters` without properties, which Gemini has refused (the whole request with it).
    expect(map).toEqual({ name: "set_env", parametersJsonSchema: { type: "object", additionalProperties: { type: "string" } } });
  });

  it("chat: a root allOf of if/then (x required in mode a) is a 200 with both properties, the conditional said in the description", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "x" }], tools: [
      { type: "function", function: { name: "pick", parameters: { type: "object", properties: { mode: { type: "string", enum: ["a", "b"] }, x: { type: "string" } }, allOf: [{ if: { properties: { mode: { const: "a" } } }, then: { required: ["x"] } }] } } },
    ] }, auth);
    expect(r.status, r.text).toBe(200);
    expect(declarations()[0].parameters).toEqual({
      type: "object",
      properties: { mode: { type: "string", enum: ["a", "b"] }, x: { type: "string" } },
      description: '(if: {"properties":{"mode":{"const":"a"}}}) (then: {"required":["x"]})',
    });
  });

  it("Messages: input_schema {type: object, anyOf: [...]} keeps its properties", async () => {
    const r = await postJson(`${gw.url}/api/v1/messages`, { model, max_tokens: 50, messages: [{ role: "user", content: "x" }], tools: [
      { name: "lookup", input_schema: { type: "object", anyOf: [byId, byName] } },
    ] }, { "x-api-key": LIVE, "anthropic-version": "2023-06-01" });
    expect(r.status).toBe(200);
    expect(declarations()[0].parameters.properties).toEqual({ id: { type: "integer" }, name: { type: "string" } });
  });

  it("a bound Gemini has no keyword for is said in the property's description", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "x" }], tools: [
      { type: "function", function: { name: "pay", parameters: { type: "object", properties: { amount: { type: "number", exclusiveMinimum: 0, multipleOf: 0.01 } }, required: ["amount"] } } },
    ] }, auth);
    expect(r.status).toBe(200);
    expect(declarations()[0].parameters.properties.amount).toEqual({ type: "number", description: "(exclusiveMinimum: 0) (multipleOf: 0.01)" });
  });
});
