// Starts a fake Anthropic and a fake Bedrock, and a gateway serving Claude Sonnet 4.5 on Anthropic (CLAUDE) beside
// the Bedrock models a test names, to one key.
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { startFakeBedrock, type FakeBedrock } from "../upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./fake-bedrock-provider.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

export const CLAUDE = "anthropic/claude-sonnet-4.5";

export interface AnthropicAndBedrockGateway {
  anthropic: FakeAnthropic;
  bedrock: FakeBedrock;
  gw: TestGateway;
  close(): Promise<void>;
}

/** `bedrockModels`: model entries whose endpoints name provider "aws". */
export async function startAnthropicAndBedrockGateway(key: string, bedrockModels: Record<string, unknown>): Promise<AnthropicAndBedrockGateway> {
  const [anthropic, bedrock] = await Promise.all([startFakeAnthropic(), startFakeBedrock()]);
  try {
    const gw = await startTestGateway({
      providers: {
        ant: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
        aws: fakeBedrockProvider(bedrock),
      },
      models: {
        [CLAUDE]: { type: "language", endpoints: [{ provider: "ant", model: "claude-sonnet-4-5", pricing: { input: "0.000003", output: "0.000015" } }] },
        ...bedrockModels,
      },
      projects: { acme: { keys: [keyEntry("ci", key)] } },
    });
    return { anthropic, bedrock, gw, close: async () => { await gw.close(); await Promise.all([anthropic.close(), bedrock.close()]); } };
  } catch (err) {
    await Promise.all([anthropic.close(), bedrock.close()]);
    throw err;
  }
}
