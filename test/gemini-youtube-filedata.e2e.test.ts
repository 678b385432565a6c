// A Gemini client sends a YouTube video as Google's own examples do — fileData with a fileUri and no mimeType — to
// a model that is not Gemini: only Gemini reads a video from its URL, so the request is a 400 naming the part, in
// Google's envelope, with no upstream call (not the video link sent to the model as an image).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";

const KEY = testKey("gemini-youtube-filedata");
const MODEL = "openai/gpt-4.1";
let up: FakeOpenAI;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAI();
  gw = await startTestGateway({
    providers: { oai: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" } },
    models: { [MODEL]: { type: "language", endpoints: [{ provider: "oai", model: "gpt-4.1", pricing: { input: "0.000002", output: "0.000008" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe("Gemini client: an untyped YouTube fileData to an OpenAI model", () => {
  it("is a 400 INVALID_ARGUMENT naming contents[0].parts[1].fileData.fileUri; the upstream is not called", async () => {
    const before = up.requests.length;
    const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Summarise this video." }, { fileData: { fileUri: "https://www.youtube.com/watch?v=9hE5-98ZeCg" } }] }] }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(JSON.stringify(body.error)).toContain("contents[0].parts[1].fileData.fileUri");
    expect(up.requests.length).toBe(before);
  });

  // Consecutive user contents are one chat message: the part is still named in the client's own content, not at its
  // place in the merged one (contents[0].parts[1], a field the client never sent).
  it("in the second of two user contents in a row, is named where the client sent it: contents[1].parts[0]", async () => {
    const before = up.requests.length;
    const res = await fetch(`${gw.url}/api/v1beta/models/${MODEL}:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": KEY },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Summarise this video." }] }, { role: "user", parts: [{ fileData: { fileUri: "https://youtu.be/9hE5-98ZeCg" } }] }] }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.details[1].fieldViolations).toEqual([expect.objectContaining({ field: "contents[1].parts[0].fileData.fileUri" })]);
    expect(up.requests.length).toBe(before);
  });
});
