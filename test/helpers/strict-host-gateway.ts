// A gateway in front of a strict OpenAI-compatible reasoning host it does not know (test/upstreams/openai-strict-host.ts),
// served twice: as a provider with no reasoning_field, and as one with reasoning_field: none. Both on loopback, so no
// known host's convention applies.
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { REASONING_FIELDS, refuseReasoningBack } from "../upstreams/openai-strict-host.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

export const UNKNOWN = "strict/reasoner";
export const NONE = "quiet/reasoner";

/** The two providers, labelled for describe.each. */
export const STRICT_HOSTS = [
  ["no reasoning_field (an unknown host)", UNKNOWN],
  ["reasoning_field: none", NONE],
] as const;

export async function startStrictHostGateway(key: string): Promise<{ up: FakeOpenAI; gw: TestGateway }> {
  const up = await startFakeOpenAI();
  // The host thinks aloud in `reasoning` (as vLLM and gpt-oss hosts do) but takes no reasoning back.
  up.reasoning = "reasoning";
  refuseReasoningBack(up);
  const endpoint = (provider: string) => [{ provider, model: "reasoner-1", pricing: { input: "0.000001", output: "0.000002" } }];
  const gw = await startTestGateway({
    providers: {
      strict: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream" },
      quiet: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream", reasoning_field: "none" },
    },
    models: {
      [UNKNOWN]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: endpoint("strict") },
      [NONE]: { type: "language", tags: ["tool-use", "reasoning"], endpoints: endpoint("quiet") },
    },
    projects: { acme: { keys: [keyEntry("ci", key)] } },
  });
  return { up, gw };
}

/** The reasoning fields on the assistant message of the turn the host got last. */
export const sentReasoningFields = (up: FakeOpenAI) =>
  Object.keys(up.requests.at(-1)!.body.messages.find((m: any) => m.role === "assistant")).filter((k) => REASONING_FIELDS.includes(k));
