// Starts the fake Bedrock and a gateway serving Claude Sonnet 4.5 there to one key, with a 200k window and a
// long-context tier (past 200k input tokens, a 1M window) that the 1M beta opens: the set-up of the Bedrock beta tests.
import Big from "big.js";
import { startFakeBedrock, type FakeBedrock } from "../upstreams/bedrock.ts";
import { fakeBedrockProvider } from "./fake-bedrock-provider.ts";
import { keyEntry, startTestGateway, type TestGateway } from "./gateway.ts";

export const SONNET = "anthropic/claude-sonnet-4.5";
export const BETA = "context-1m-2025-08-07";
export const BIG = "y".repeat(1_000_000); // about 250 000 tokens as the fake counts them

export interface LongContextBedrock {
  bedrock: FakeBedrock;
  gw: TestGateway;
  close(): Promise<void>;
}

/** `provider` is added to the Bedrock provider's settings (bedrock_claude_api, configured headers). */
export async function startLongContextBedrock(key: string, provider: Record<string, unknown> = {}): Promise<LongContextBedrock> {
  const bedrock = await startFakeBedrock();
  try {
    const gw = await startTestGateway({
      providers: { aws: fakeBedrockProvider(bedrock, provider) },
      models: {
        // Without the beta the gateway holds and bills a call within 200k; with it, within 1M.
        [SONNET]: { type: "language", context_window: 200000, max_tokens: 64000, endpoints: [{ provider: "aws", model: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", pricing: { input: "0.000003", output: "0.000015", long_context: { above_input_tokens: 200000, input: "0.000006", output: "0.0000225", context_window: 1000000 } } }] },
      },
      projects: { acme: { keys: [keyEntry("ci", key)], budget: { usd: "100", period: "month" } } },
    });
    return { bedrock, gw, close: async () => { await gw.close(); await bedrock.close(); } };
  } catch (err) {
    await bedrock.close();
    throw err;
  }
}

/** What the ledger billed `record`, recomputed at the given per-token prices. */
export const at = (record: { inputTokens: number; outputTokens: number }, input: string, output: string) =>
  new Big(input).times(record.inputTokens).plus(new Big(output).times(record.outputTokens)).toFixed();
