import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { adaptSchemas, openAIErrors, openAIShapeChecker, openAISpecSource, responseEventSchema } from "./openai-spec.ts";
import { closure, ROOTS } from "../../scripts/vendor-openai-openapi.ts";

const fixture = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "openai-openapi", "components.json"), "utf8"));

const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 };
const response = {
  id: "resp_1", object: "response", created_at: 1, status: "completed", error: null, incomplete_details: null, instructions: null,
  model: "openai/gpt-5", output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hi", annotations: [], logprobs: [] }] }],
  parallel_tool_calls: true, metadata: {}, tool_choice: "auto", tools: [], temperature: null, top_p: null, usage, user: null,
};

describe("the vendored excerpt of OpenAI's description", () => {
  it("names its source and holds every root and every schema a root reaches", () => {
    expect(openAISpecSource()).toMatchObject({ repository: "https://github.com/openai/openai-openapi", commit: expect.stringMatching(/^[0-9a-f]{40}$/), date: expect.any(String) });
    const schemas = fixture.components.schemas;
    expect(Object.keys(closure(schemas, ROOTS)).sort()).toEqual(Object.keys(schemas).sort());
  });
});

describe("validation against it (what the tests use)", () => {
  it("accepts a response object as the API gives it (null for unset optional fields)", () => {
    expect(openAIErrors("Response", response)).toEqual([]);
  });

  it("usage without input_tokens_details.cache_write_tokens is refused (required since July 2026)", () => {
    const old = { ...response, usage: { ...usage, input_tokens_details: { cached_tokens: 0 } } };
    expect(openAIErrors("Response", old).join()).toContain("cache_write_tokens");
  });

  it("a required property is never null, even where allOf parts define and require it apart (model)", () => {
    expect(openAIErrors("Response", { ...response, model: null }).join()).toContain("/model");
    expect(openAIErrors("Response", { ...response, id: undefined }).join()).toContain("id");
  });

  it("image usage needs OpenAI's token fields", () => {
    const images = { created: 1, data: [{ b64_json: "AA==" }] };
    expect(openAIErrors("ImagesResponse", { ...images, usage: { input_tokens: 3, output_images: 1 } }).join()).toMatch(/total_tokens|output_tokens|input_tokens_details/);
    expect(openAIErrors("ImagesResponse", { ...images, usage: { input_tokens: 3, input_tokens_details: { text_tokens: 3, image_tokens: 0 }, output_tokens: 0, total_tokens: 3, output_images: 1 } })).toEqual([]);
  });

  it("chat chunks: types and the finish_reason enum are checked", () => {
    const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "x" }, finish_reason: null }] };
    expect(openAIErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    expect(openAIErrors("CreateChatCompletionStreamResponse", { ...chunk, choices: [{ index: "0", delta: {}, finish_reason: null }] })).not.toEqual([]);
    expect(openAIErrors("CreateChatCompletionStreamResponse", { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: "done" }] })).not.toEqual([]);
  });

  it("stream events are looked up by type; an unknown type has no schema", () => {
    expect(responseEventSchema("response.output_text.delta")).toBe("ResponseTextDeltaEvent");
    expect(responseEventSchema("error")).toBe("ResponseErrorEvent");
    expect(responseEventSchema("response.made_up")).toBeUndefined();
    expect(openAIErrors("ResponseErrorEvent", { type: "error", code: "x", message: "m", param: null })).not.toEqual([]); // no sequence_number
  });

  it("nullable: true becomes a null alternative; oneOf becomes anyOf; discriminators go", () => {
    const out = adaptSchemas({
      A: { type: "object", required: ["x"], properties: { x: { type: "string", nullable: true }, y: { type: "integer" } } },
      B: { oneOf: [{ $ref: "#/components/schemas/A" }], discriminator: { propertyName: "x" } },
    });
    expect(out.A.properties).toEqual({ x: { type: ["string", "null"] }, y: { type: ["integer", "null"] } });
    expect(out.B).toEqual({ anyOf: [{ $ref: "#/components/schemas/A" }] });
  });
});

describe("openAIShapeChecker (the openai client's fetch in the e2e tests)", () => {
  it("finds a bad JSON answer and a bad stream event; base64 embeddings are read as the SDK reads them", async () => {
    const answers: Record<string, { type: string; body: string }> = {
      "/v1/embeddings": { type: "application/json", body: JSON.stringify({ object: "list", model: "m", usage: { prompt_tokens: 1, total_tokens: 1 }, data: [{ object: "embedding", index: 0, embedding: Buffer.from(new Float32Array([0.5, 1]).buffer).toString("base64") }] }) },
      "/v1/images/generations": { type: "application/json", body: JSON.stringify({ created: 1, data: [], usage: { input_tokens: 1, output_images: 0 } }) },
      "/v1/responses": { type: "text/event-stream", body: `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: "x" })}\n\n` },
    };
    const server = createServer((req, res) => {
      const a = answers[req.url!]!;
      res.writeHead(200, { "content-type": a.type });
      res.end(a.body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const shapes = openAIShapeChecker();
      await (await shapes.fetch(`${base}/v1/embeddings`, { method: "POST" })).json();
      await shapes.check();
      await (await shapes.fetch(`${base}/v1/images/generations`, { method: "POST" })).json();
      await expect(shapes.check()).rejects.toThrow(/ImagesResponse/);
      await (await shapes.fetch(`${base}/v1/responses`, { method: "POST" })).text();
      await expect(shapes.check()).rejects.toThrow(/response\.output_text\.delta/);
    } finally {
      server.close();
    }
  });
});
