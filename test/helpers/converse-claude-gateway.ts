// Starts the fake Bedrock and a gateway serving Claude Sonnet 4.5 through Converse (bedrock_claude_api: converse) to one key.
import { startFakeBedrock, type FakeBedrock } from "../upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./fake-bedrock-provider.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

/** The gateway's model, and the Bedrock model it calls. */
export const CONVERSE_CLAUDE = "test/claude-converse";
export const CONVERSE_UPSTREAM = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

export interface ConverseClaudeGateway {
  bedrock: FakeBedrock;
  gw: TestGateway;
  close(): Promise<void>;
}

export async function startConverseClaudeGateway(key: string): Promise<ConverseClaudeGateway> {
  const bedrock = await startFakeBedrock();
  try {
    const gw = await startTestGateway({
      providers: { aws: fakeBedrockProvider(bedrock, { bedrock_claude_api: "converse" }) },
      models: { [CONVERSE_CLAUDE]: { type: "language", endpoints: [{ provider: "aws", model: CONVERSE_UPSTREAM, pricing: { input: "0.000003", output: "0.000015" } }] } },
      projects: { acme: { keys: [keyEntry("ci", key)] } },
    });
    return { bedrock, gw, close: async () => { await gw.close(); await bedrock.close(); } };
  } catch (err) {
    await bedrock.close();
    throw err;
  }
}
