// The world coding agents run in (npm run test:agents) and their recordings are replayed in (agents-replay e2e): the
// gateway as it ships (gateway.yaml: SQLite store, the full default pipeline, the default catalog, a live key with a
// budget and rate limits) in front of fake upstreams that play the scripted agent model (upstreams/scripted-agent.ts)
// and check what the real APIs check. One model of the default catalog per upstream protocol.
import { startTestGateway, type TestGateway } from "./gateway.ts";
import { providerEnv, shippedConfig } from "./shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "../upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "../upstreams/gemini.ts";
import { agentScript } from "../upstreams/scripted-agent.ts";
import type { RecordedRequest } from "../upstreams/openai.ts";

export const UPSTREAMS = ["anthropic", "openai-chat", "gemini", "openai-responses"] as const;
export type Upstream = (typeof UPSTREAMS)[number];

/**
 * The gateway model each upstream serves, all thinking models of the default catalog: Claude Sonnet 4.6 (Anthropic
 * Messages), gpt-oss-120b (an OpenAI-protocol host that has only chat completions: Groq, which returns the reasoning
 * of a request with reasoning_effort in `reasoning`), Gemini 2.5 Flash
 * (the Gemini API) and GPT-5 mini (OpenAI, served through its own /responses to Responses clients, `native_responses`).
 */
export const MODEL: Record<Upstream, string> = {
  anthropic: "anthropic/claude-sonnet-4.6",
  "openai-chat": "openai/gpt-oss-120b",
  gemini: "google/gemini-2.5-flash",
  "openai-responses": "openai/gpt-5-mini",
};

export interface AgentWorld {
  gw: TestGateway;
  anthropic: FakeAnthropic;
  /** Serves both OpenAI protocols: /v1/chat/completions (as the Groq host) and /v1/responses (as OpenAI). */
  openai: FakeOpenAIWithResponses;
  gemini: FakeGemini;
  /** The requests the upstream of `u` received, oldest first. */
  upstreamRequests(u: Upstream): RecordedRequest[];
  close(): Promise<void>;
}

export async function startAgentWorld(): Promise<AgentWorld> {
  const [openai, anthropic, gemini] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic(), startFakeGemini()]);
  for (const f of [openai, anthropic, gemini]) f.script = agentScript;
  // Groq's reasoning, and its refusals (`reasoning_content` on an assistant message, which opencode and Qwen Code send back).
  openai.reasoning = "reasoning";
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  // A loopback URL says nothing about the host it plays: the convention gateway.yaml's groq gets from its URL, stated.
  config.providers.groq.base_url = openai.baseUrl;
  config.providers.groq.reasoning_field = "reasoning";
  const gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY, GROQ_API_KEY: "sk-fake-upstream" } });
  const byPath = (re: RegExp) => openai.requests.filter((r) => re.test(r.path));
  return {
    gw, anthropic, openai, gemini,
    upstreamRequests: (u) =>
      u === "anthropic" ? anthropic.requests : u === "gemini" ? gemini.requests : byPath(u === "openai-chat" ? /^\/v1\/chat\/completions/ : /^\/v1\/responses/),
    close: async () => {
      await gw.close();
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    },
  };
}
