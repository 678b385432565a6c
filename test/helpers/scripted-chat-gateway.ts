// A gateway in front of a DeepSeek-like chat host (the fake OpenAI upstream) that streams the chunks a test scripts:
// for the end-to-end tests of what a client makes of a host's interleaving of text, reasoning and call fragments.
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "../upstreams/openai.ts";
import { streamScripted } from "../upstreams/openai-scripted-stream.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

/**
 * `models` maps each catalog id to the host's model name, served by provider "ds" (with `provider`'s extra settings)
 * at DeepSeek's reasoner prices; a streamed request gets `chunksFor`'s chunks (none: the fake answers as usual).
 */
export async function startScriptedChatGateway(
  key: string,
  models: Record<string, string>,
  chunksFor: (rec: RecordedRequest) => unknown[] | undefined,
  provider: Record<string, unknown> = {},
): Promise<{ up: FakeOpenAI; gw: TestGateway }> {
  const up = await startFakeOpenAI();
  streamScripted(up, chunksFor);
  const entry = (model: string) => ({ type: "language", tags: ["tool-use", "reasoning"], endpoints: [{ provider: "ds", model, pricing: { input: "0.00000055", output: "0.0000022" } }] });
  const gw = await startTestGateway({
    providers: { ds: { protocol: "openai", base_url: up.baseUrl, api_key: "sk-fake-upstream", ...provider } },
    models: Object.fromEntries(Object.entries(models).map(([id, model]) => [id, entry(model)])),
    projects: { acme: { keys: [keyEntry("ci", key)] } },
  });
  return { up, gw };
}
