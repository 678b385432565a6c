// A gateway in front of a fake Gemini (google/gem) and a fake OpenAI (openai/gpt) upstream, one project key: the
// set-up of the tests that compare what a Gemini client gets from a native and from a translated upstream.
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "../upstreams/gemini.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

export interface GeminiOpenAIGateway {
  gw: TestGateway;
  gemini: FakeGemini;
  openai: FakeOpenAI;
  close(): Promise<void>;
}

const pricing = { input: "0.000001", output: "0.000002" };

/** The gateway and its two upstreams; `key` is project acme's. */
export async function startGeminiOpenAIGateway(key: string): Promise<GeminiOpenAIGateway> {
  const gemini = await startFakeGemini();
  const openai = await startFakeOpenAI();
  const gw = await startTestGateway({
    providers: {
      gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
      oai: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "google/gem": { type: "language", endpoints: [{ provider: "gem", model: "gemini-test", pricing }] },
      "openai/gpt": { type: "language", endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", key)] } },
  });
  return {
    gw, gemini, openai,
    async close() {
      await gw.close();
      await gemini.close();
      await openai.close();
    },
  };
}
