// What every Gemini op receives from the driver (index.ts builds it): its own file so ops need not import index.ts.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { UpstreamClient } from "../http.ts";

export interface GeminiEnv {
  name: string;
  config: ProviderConfig;
  client: UpstreamClient;
}
