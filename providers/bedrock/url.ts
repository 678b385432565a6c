// Bedrock Runtime URLs: the regional host (or base_url, for tests and VPC endpoints), the model id as ONE path
// segment. encodeURIComponent turns `:` (…-v1:0) into %3A and the `/` of an ARN into %2F; the signer signs exactly
// this path (auth.ts), so the wire and the signature agree.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { Target } from "../../core/contracts/provider.ts";

export type BedrockAction = "converse" | "converse-stream" | "invoke" | "invoke-with-response-stream";

export function bedrockBase(config: ProviderConfig, target: Target, region: string): string {
  const base = target.credentials?.baseUrl ?? config.base_url ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  return base.replace(/\/+$/, "");
}

export function bedrockUrl(config: ProviderConfig, target: Target, region: string, action: BedrockAction): string {
  return `${bedrockBase(config, target, region)}/model/${encodeURIComponent(target.upstreamModel)}/${action}`;
}
