// What every Vertex op receives from the driver (index.ts builds it).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { UpstreamClient } from "../http.ts";
import type { VertexAuth } from "./auth.ts";

export interface VertexEnv {
  name: string;
  config: ProviderConfig;
  client: UpstreamClient;
  auth: VertexAuth;
  /** The location: a region (us-central1, us-east5, europe-west4…), global, us or eu. */
  location: string;
}
