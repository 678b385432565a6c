// What every Bedrock op receives from the driver (index.ts builds it): its own file so ops need not import index.ts.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { UpstreamClient } from "../http.ts";
import type { BedrockAuth } from "./auth.ts";

export interface BedrockEnv {
  name: string;
  config: ProviderConfig;
  client: UpstreamClient;
  auth: BedrockAuth;
}
