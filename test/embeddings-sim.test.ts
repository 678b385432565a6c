// Embeddings on the simulator (sandbox key): the official openai client (default base64), float, dimensions,
// limits and error codes.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, cosine, mediaConfig, norm, SANDBOX } from "./helpers/media.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

let gw: TestGateway;
let client: OpenAI;
/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  gw = await startTestGateway(mediaConfig());
  client = new OpenAI({ apiKey: SANDBOX, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});
afterAll(() => gw.close());

describe("embeddings on the simulator", () => {
  it("works with the official client's defaults (base64 on the wire) and is unit length, ordered, deterministic", async () => {
    const input = ["The cat sat on the mat", "A cat was sitting on a mat", "Quarterly revenue grew by ten percent"];
    const res = await client.embeddings.create({ model: "sim/embed", input });
    expect(res.object).toBe("list");
    expect(res.model).toBe("sim/embed");
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const d of res.data) {
      expect(d.embedding).toHaveLength(256);
      expect(norm(d.embedding)).toBeCloseTo(1, 5);
    }
    // similar texts are close, unrelated ones are not
    const near = cosine(res.data[0]!.embedding, res.data[1]!.embedding);
    const far = cosine(res.data[0]!.embedding, res.data[2]!.embedding);
    expect(near).toBeGreaterThan(0.35);
    expect(far).toBeLessThan(0.15);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens);
    const again = await client.embeddings.create({ model: "sim/embed", input: input[0]! });
    expect(again.data[0]!.embedding).toEqual(res.data[0]!.embedding);
  });

  it("returns float arrays for encoding_format float and base64 little-endian float32 for base64", async () => {
    const f = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input: "hello world", encoding_format: "float" }, auth(SANDBOX));
    expect(f.status).toBe(200);
    expect(Array.isArray(f.json.data[0].embedding)).toBe(true);
    const b = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input: "hello world", encoding_format: "base64" }, auth(SANDBOX));
    expect(typeof b.json.data[0].embedding).toBe("string");
    const buf = Buffer.from(b.json.data[0].embedding, "base64");
    expect(buf.length).toBe(256 * 4);
    const decoded = Array.from({ length: 256 }, (_, i) => buf.readFloatLE(i * 4));
    decoded.forEach((x, i) => expect(x).toBeCloseTo(f.json.data[0].embedding[i], 6));
  });

  it("truncates and re-normalises dimensions where the catalog allows it", async () => {
    const full = await client.embeddings.create({ model: "sim/embed", input: "semantic search", encoding_format: "float" });
    const cut = await client.embeddings.create({ model: "sim/embed", input: "semantic search", dimensions: 64, encoding_format: "float" });
    expect(cut.data[0]!.embedding).toHaveLength(64);
    expect(norm(cut.data[0]!.embedding)).toBeCloseTo(1, 5);
    const prefix = full.data[0]!.embedding.slice(0, 64);
    expect(cosine(prefix, cut.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  it("answers 422 INVALID_REQUEST for dimensions a model does not support", async () => {
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "acme/fixed-embed", input: "x", dimensions: 128 }, auth(SANDBOX));
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("INVALID_REQUEST");
    expect(r.json.error.details.field).toBe("dimensions");
    const tooBig = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input: "x", dimensions: 4096 }, auth(SANDBOX));
    expect(tooBig.status).toBe(422);
    // the model's own size is always fine
    const same = await postJson(`${gw.baseURL}/embeddings`, { model: "acme/fixed-embed", input: "x", dimensions: 384 }, auth(SANDBOX));
    expect(same.status).toBe(200);
    expect(same.json.data[0].embedding).toHaveLength(384);
  });

  it("accepts 2048 inputs, one entry each in order, and rejects 2049 with 400 INVALID_REQUEST", async () => {
    const input = Array.from({ length: 2048 }, (_, i) => `document number ${i}`);
    const ok = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input, encoding_format: "base64" }, auth(SANDBOX));
    expect(ok.status).toBe(200);
    expect(ok.json.data).toHaveLength(2048);
    expect(ok.json.data.every((d: any, i: number) => d.index === i)).toBe(true);
    const tooMany = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input: [...input, "one more"] }, auth(SANDBOX));
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.code).toBe("INVALID_REQUEST");
    expect(tooMany.json.error.details.field).toBe("input");
  });

  it("rejects an input longer than the model's context with 400 naming its index", async () => {
    const long = "word ".repeat(600);
    const r = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input: ["short", long] }, auth(SANDBOX));
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("INVALID_REQUEST");
    expect(r.json.error.details.field).toBe("input[1]");
    expect(r.json.error.details.index).toBe(1);
    expect(r.json.error.message).toContain("input[1]");
  });

  it("validates fields: empty input, bad encoding_format, non-embedding model, unknown model, missing key", async () => {
    const cases: [unknown, number, string, string?][] = [
      [{ model: "sim/embed", input: [] }, 400, "INVALID_REQUEST", "input"],
      [{ model: "sim/embed", input: ["ok", ""] }, 400, "INVALID_REQUEST", "input[1]"],
      [{ model: "sim/embed", input: "x", encoding_format: "int8" }, 400, "INVALID_REQUEST", "encoding_format"],
      [{ model: "sim/embed", input: "x", dimensions: 0 }, 400, "INVALID_REQUEST", "dimensions"],
      [{ model: "openai/gpt-4o-mini", input: "x" }, 400, "INVALID_REQUEST", "model"],
      [{ model: "nope/nothing", input: "x" }, 404, "MODEL_NOT_FOUND", "model"],
    ];
    for (const [body, status, code, field] of cases) {
      const r = await postJson(`${gw.baseURL}/embeddings`, body, auth(SANDBOX));
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.error.code).toBe(code);
      if (field) expect(r.json.error.details.field).toBe(field);
    }
    const noKey = await postJson(`${gw.baseURL}/embeddings`, { model: "sim/embed", input: "x" });
    expect(noKey.status).toBe(401);
    expect(noKey.json.error.code).toBe("INVALID_API_KEY");
  });
});
