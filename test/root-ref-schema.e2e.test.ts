// A JSON schema whose root is only a $ref, as Pydantic v2's model_json_schema() writes a recursive model, asked of a
// Claude model: the gateway sends Anthropic the object it points at (its $defs kept for the references inside) and
// the client gets its JSON answer, from a chat response_format, a Responses text.format and a Gemini client's
// responseJsonSchema alike (a 400 "the JSON schema's root must be an object" before).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";

const KEY = testKey("root-ref-schema");
const CLAUDE = "anthropic/claude-sonnet-4.5";
const auth = { authorization: `Bearer ${KEY}` };
const node = { type: "object", properties: { value: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["value"], title: "Node" };
const pydantic = { $defs: { Node: node }, $ref: "#/$defs/Node" };

let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: { ant: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY } },
    models: { [CLAUDE]: { type: "language", endpoints: [{ provider: "ant", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await anthropic?.close();
});

/** The schema the last request to Anthropic carried as its forced JSON tool's input_schema. */
const sentSchema = () => anthropic.requests.at(-1)!.body.tools[0].input_schema;

describe("a root $ref schema (Pydantic's recursive model) on a Claude model", () => {
  it("chat response_format json_schema: Anthropic gets the Node object with its $defs, the client its JSON", async () => {
    const r = await postJson(`${gw.baseURL}/chat/completions`, { model: CLAUDE, messages: [{ role: "user", content: "a tree" }], response_format: { type: "json_schema", json_schema: { name: "tree", schema: pydantic } } }, auth);
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.json.choices[0].message.content)).toMatchObject({ value: expect.any(String) });
    expect(sentSchema()).toEqual({ ...node, $defs: { Node: node } });
  });

  it("Responses text.format json_schema: the same", async () => {
    const r = await postJson(`${gw.baseURL}/responses`, { model: CLAUDE, input: "a tree", text: { format: { type: "json_schema", name: "tree", schema: pydantic } } }, auth);
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.json.output_text ?? r.json.output.find((o: any) => o.type === "message").content[0].text)).toMatchObject({ value: expect.any(String) });
    expect(sentSchema()).toEqual({ ...node, $defs: { Node: node } });
  });

  it("Gemini client's responseJsonSchema: the same", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "a tree" }] }], generationConfig: { responseMimeType: "application/json", responseJsonSchema: pydantic } };
    const res = await fetch(`${gw.url}/api/v1beta/models/${CLAUDE}:generateContent`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(body) });
    const json: any = await res.json();
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(JSON.parse(json.candidates[0].content.parts[0].text)).toMatchObject({ value: expect.any(String) });
    expect(sentSchema()).toEqual({ ...node, $defs: { Node: node } });
  });
});
