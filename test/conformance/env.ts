// The conformance matrix's world: one fake upstream per protocol, one gateway (shipped default pipeline) with a model
// on each, and both official clients. Everything a scenario needs to drive a cell and look at what the upstream got.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "../upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "../upstreams/gemini.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "../helpers/gateway.ts";
import { geminiClient, type GeminiClient } from "../helpers/gemini-client.ts";

export const UPSTREAMS = ["openai", "anthropic", "gemini"] as const;
export type Upstream = (typeof UPSTREAMS)[number];

export interface Env {
  chat: OpenAI;
  messages: Anthropic;
  /** The Gemini protocol, as @google/genai sends it (raw HTTP: the SDK is not a dependency yet). */
  gemini: GeminiClient;
  gw: TestGateway;
  /** The gateway model id served by each upstream protocol. */
  model: Record<Upstream, string>;
  /** The last request the upstream received (its own wire format). */
  last(u: Upstream): RecordedRequest;
  /** The upstream answers the next `times` requests with this HTTP status. */
  fail(u: Upstream, status: number, times: number): void;
  /** Forget scripted failures left over by a cell. */
  reset(): void;
  close(): Promise<void>;
}

const pricing = { input: "0.000001", output: "0.000002" };

export async function startEnv(): Promise<Env> {
  const fakes: { openai: FakeOpenAI; anthropic: FakeAnthropic; gemini: FakeGemini } = {
    openai: await startFakeOpenAI(),
    anthropic: await startFakeAnthropic(),
    gemini: await startFakeGemini(),
  };
  const key = testKey("conformance");
  const model: Record<Upstream, string> = { openai: "openai/gpt-test", anthropic: "anthropic/claude-test", gemini: "google/gemini-test" };
  const gw = await startTestGateway({
    providers: {
      oai: { protocol: "openai", base_url: fakes.openai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: fakes.anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      gem: { protocol: "gemini", base_url: fakes.gemini.baseUrl, api_key: FAKE_GEMINI_KEY },
    },
    models: {
      // `reasoning`: Gemini clients ask for thinking with includeThoughts, which only a model that can think honours.
      [model.openai]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: "oai", model: "gpt-test", pricing }] },
      [model.anthropic]: { type: "language", tags: ["tool-use", "reasoning"], max_tokens: 8192, endpoints: [{ provider: "claude", model: "claude-test", pricing }] },
      [model.gemini]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: "gem", model: "gemini-test", pricing }] },
    },
    projects: { acme: { keys: [keyEntry("ci", key)] } },
  });
  return {
    gw,
    model,
    chat: new OpenAI({ apiKey: key, baseURL: gw.baseURL, maxRetries: 0 }),
    messages: new Anthropic({ apiKey: key, baseURL: `${gw.url}/api`, maxRetries: 0 }),
    gemini: geminiClient(`${gw.url}/api`, key),
    last: (u) => fakes[u].requests.at(-1)!,
    fail: (u, status, times) => {
      for (let i = 0; i < times; i++) (fakes[u].failures as { kind: "status"; status: number }[]).push({ kind: "status", status });
    },
    reset: () => {
      for (const f of Object.values(fakes)) f.failures.length = 0;
    },
    close: async () => {
      await gw.close();
      await Promise.all(Object.values(fakes).map((f) => f.close()));
    },
  };
}
