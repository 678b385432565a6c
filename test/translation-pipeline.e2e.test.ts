// Translation is applied in one place (issue 12): without stream-transcoder in the pipeline no cross-protocol pair
// works, Gemini included (it used to translate chat inside its own driver), while native requests still do.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { defaultPipeline } from "../plugins/index.ts";

const LIVE = testKey("translation-pipeline");
const auth = { authorization: `Bearer ${LIVE}` };
let gemini: FakeGemini;
let gw: TestGateway;

beforeAll(async () => {
  gemini = await startFakeGemini();
  gw = await startTestGateway({
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: {
      "google/gemini-2.5-flash": { endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] },
      "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] },
    },
    projects: { acme: { keys: [keyEntry("ci", LIVE)] } },
    pipeline: defaultPipeline().filter((n) => n !== "stream-transcoder"),
  });
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});

const chat = (model: string) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "Hi" }] }, auth);
const messages = (model: string) => postJson(`${gw.baseURL}/messages`, { model, max_tokens: 50, messages: [{ role: "user", content: "Hi" }] }, auth);

describe("a pipeline without stream-transcoder", () => {
  it("serves native requests only: chat to a chat upstream, nothing to Gemini from either protocol", async () => {
    expect((await chat("openai/gpt-4o-mini")).status).toBe(200);
    const m = await messages("openai/gpt-4o-mini");
    expect(m.status).toBe(400);
    expect(m.text).toContain("does not support messages requests");
    for (const r of [await chat("google/gemini-2.5-flash"), await messages("google/gemini-2.5-flash")]) {
      expect(r.status).toBe(400);
      expect(r.text).toContain("does not support");
    }
    expect(gemini.requests).toEqual([]);
  });
});
