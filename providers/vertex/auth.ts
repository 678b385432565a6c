// Where a Vertex request's bearer token and project come from: a service-account key file (credentials_file,
// already made absolute by the config loader) exchanged for refreshed access tokens, or an access token given
// directly as api_key (a BYOK key is such a token too). project_id defaults to the key file's.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { Target } from "../../core/contracts/provider.ts";
import { UpstreamClient } from "../http.ts";
import type { EgressProxy } from "../../core/net/egress-proxy.ts";
import { AccessTokens } from "./access-tokens.ts";
import { credentialsError, readServiceAccount, type ServiceAccount } from "./service-account.ts";

export interface Credentials {
  token: string;
  project: string;
  /** Whether a 401 is worth one more try with a fresh token. */
  refreshable: boolean;
}

export interface VertexAuth {
  credentials(target: Target, signal: AbortSignal): Promise<Credentials>;
  /** The upstream answered 401 to this token. */
  invalidate(token: string): void;
  readonly tokens?: AccessTokens;
  close(): Promise<void>;
}

/** `egress`: the token exchange (oauth2.googleapis.com) goes through the egress proxy like the calls it serves. */
export function createVertexAuth(provider: string, config: ProviderConfig, timeoutMs: number, egress?: EgressProxy): VertexAuth {
  const file = config.credentials_file;
  let account: Promise<ServiceAccount> | undefined;
  // Read once; a failed read is not kept, so fixing the file needs no restart.
  const loadAccount = () => (account ??= readServiceAccount(file!, provider).catch((err) => {
    account = undefined;
    throw err;
  }));
  const client = new UpstreamClient(provider, { connections: 4, timeoutMs, egress });
  const tokens = file ? new AccessTokens({ provider, account: loadAccount, client, timeoutMs }) : undefined;

  async function project(): Promise<string> {
    if (config.project_id) return config.project_id;
    const p = file ? (await loadAccount()).projectId : undefined;
    if (!p) throw credentialsError(provider, "no project_id in the provider config or the service-account key");
    return p;
  }

  return {
    tokens,
    async credentials(target, signal) {
      const direct = target.credentials?.apiKey ?? (tokens ? undefined : config.api_key);
      if (direct) return { token: direct, project: await project(), refreshable: false };
      if (!tokens) throw credentialsError(provider, "neither credentials_file (a service-account key) nor api_key (an access token) is set");
      const [token, p] = await Promise.all([tokens.token(signal), project()]);
      return { token, project: p, refreshable: true };
    },
    invalidate: (token) => tokens?.invalidate(token),
    close: () => client.close(),
  };
}
