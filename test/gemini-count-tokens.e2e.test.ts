// :countTokens on a model a Gemini upstream hosts (the Gemini API, Gemini on Vertex) counts the request as the client
// sent it, as :generateContent passes it through: what generateContent takes (gs:// and YouTube fileData, video
// inlineData, cachedContent, Google Search) is counted, not refused or rewritten. Other upstreams keep the translated
// count (Gemini -> Messages), which refuses what they cannot read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint } from "./upstreams/vertex-auth.ts";
import { startFakeVertex, type FakeVertex } from "./upstreams/vertex.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("gemini-count");
const price = { input: "0.000001", output: "0.000002" };
let tokens: FakeTokenEndpoint;
let vertex: FakeVertex;
let gemini: FakeGemini;
let anthropic: FakeAnthropic;
let gw: TestGateway;

beforeAll(async () => {
  tokens = await startFakeTokenEndpoint();
  const sa = makeServiceAccount(tokens.tokenUri, { projectId: "fake-project" });
  tokens.trust(sa);
  vertex = await startFakeVertex(tokens, { project: "fake-project", location: "us-east5" });
  gemini = await startFakeGemini();
  anthropic = await startFakeAnthropic();
  gw = await startTestGateway({
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      vertex: { protocol: "vertex", base_url: vertex.baseUrl, region: "us-east5", credentials_file: "sa.json" },
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
    },
    models: {
      "google/gem": { type: "language", endpoints: [{ provider: "gem", model: "gemini-test", pricing: price }] },
      "google/vgem": { type: "language", endpoints: [{ provider: "vertex", model: "gemini-2.5-flash", pricing: price }] },
      "anthropic/claude": { type: "language", max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing: price }] },
    },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  }, { files: { "sa.json": readFileSync(sa.file, "utf8") } });
});

afterAll(async () => {
  await gw?.close();
  await vertex?.close();
  await gemini?.close();
  await anthropic?.close();
  await tokens?.close();
});

const count = (model: string, body: unknown) =>
  fetch(`${gw.url}/api/v1beta/models/${model}:countTokens`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": KEY }, body: JSON.stringify(body) });

/** What :generateContent takes on Gemini and a translation cannot carry. */
const request = {
  contents: [{
    role: "user",
    parts: [
      { text: "Summarise these." },
      { fileData: { mimeType: "application/pdf", fileUri: "gs://bucket/report.pdf" } },
      { fileData: { mimeType: "video/*", fileUri: "https://www.youtube.com/watch?v=dQw4w9WgXcQ" } },
      { inlineData: { mimeType: "video/mp4", data: "AAAAIGZ0eXBpc29t" } },
    ],
  }],
  systemInstruction: { parts: [{ text: "Be brief." }] },
  tools: [{ googleSearch: {} }],
  generationConfig: { temperature: 0.2 },
};

describe("Gemini :countTokens", () => {
  it("the Gemini API counts the client's generateContentRequest as sent, its model the upstream's", async () => {
    const res = await count("google/gem", { generateContentRequest: { model: "models/google/gem", ...request, cachedContent: "cachedContents/abc" } });
    expect(res.status).toBe(200);
    expect((await res.json()).totalTokens).toBeGreaterThan(0);
    expect(gemini.requests.at(-1)!.body).toEqual({ generateContentRequest: { ...request, cachedContent: "cachedContents/abc", model: "models/gemini-test" } });
  });

  it("{contents} alone is counted as a generateContentRequest of it", async () => {
    const res = await count("google/gem", { contents: request.contents });
    expect(res.status).toBe(200);
    expect(gemini.requests.at(-1)!.body).toEqual({ generateContentRequest: { contents: request.contents, model: "models/gemini-test" } });
  });

  it("Gemini on Vertex counts it as sent, in the fields Vertex's countTokens has", async () => {
    const res = await count("google/vgem", { generateContentRequest: { ...request, safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }] } });
    expect(res.status).toBe(200);
    expect((await res.json()).totalTokens).toBeGreaterThan(0);
    const seen = vertex.requests.at(-1)!;
    expect(seen.path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:countTokens");
    expect(seen.body).toEqual(request);
  });

  it("a translated model still counts through Messages and refuses what its provider cannot read, naming it", async () => {
    const ok = await count("anthropic/claude", { contents: [{ role: "user", parts: [{ text: "Hello" }] }] });
    expect(ok.status).toBe(200);
    expect(anthropic.requests.at(-1)!.path).toBe("/v1/messages/count_tokens");
    const refused = await count("anthropic/claude", { contents: [request.contents[0]!] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toMatch(/contents\[0\]\.parts\[\d\]/);
  });
});
