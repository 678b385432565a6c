// Bedrock authentication (reference protocols-2 §2.7, §2.8): a Bedrock API key as `Authorization: Bearer`, or SigV4
// (service `bedrock`) from the provider's fields or the standard AWS_* variables. The maintained signer does the
// canonical request, including the non-S3 rule that each path segment is URI-encoded again: we hand it the exact
// wire path, so `%3A` in a model id is signed as `%253A`, as AWS computes it.
import type { SignatureV4 } from "@smithy/signature-v4";
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { Target } from "../../core/contracts/provider.ts";
import { configFault } from "../../core/errors.ts";
import type { UpstreamRequest } from "../http.ts";

export const DEFAULT_REGION = "us-east-1";

export interface BedrockAuth {
  region: string;
  /** Adds the auth headers to a request whose url, headers and body are final (the signature covers them). */
  authorize(req: UpstreamRequest, target: Target): Promise<UpstreamRequest>;
}

type Env = Record<string, string | undefined>;
const set = (v: string | undefined) => (v ? v : undefined);

export function bedrockRegion(config: ProviderConfig, env: Env = process.env): string {
  return set(config.region) ?? set(env.AWS_REGION) ?? set(env.AWS_DEFAULT_REGION) ?? DEFAULT_REGION;
}

export function createBedrockAuth(provider: string, config: ProviderConfig, env: Env = process.env): BedrockAuth {
  const region = bedrockRegion(config, env);
  const accessKeyId = set(config.aws_access_key_id) ?? set(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = set(config.aws_secret_access_key) ?? set(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = set(config.aws_session_token) ?? set(env.AWS_SESSION_TOKEN);
  // The AWS signer's packages are imported with the first signed request (~2 MB of heap a gateway without SigV4
  // providers never needs).
  let signer: Promise<SignatureV4> | undefined;
  const signerOf = (keyId: string, secret: string) =>
    (signer ??= Promise.all([import("@smithy/signature-v4"), import("@aws-crypto/sha256-js")]).then(([{ SignatureV4 }, { Sha256 }]) =>
      new SignatureV4({ credentials: { accessKeyId: keyId, secretAccessKey: secret, sessionToken }, region, service: "bedrock", sha256: Sha256 })));
  return {
    region,
    async authorize(req, target) {
      // An API key (the provider's, or a project's own) wins over SigV4, as in the AWS SDKs.
      const key = set(target.credentials?.apiKey) ?? set(config.api_key);
      if (key) return { ...req, headers: { ...req.headers, authorization: `Bearer ${key}` } };
      if (!accessKeyId || !secretAccessKey) {
        // The gateway's configuration: no retry, by dispatch or the client, finds credentials this one did not.
        throw configFault(`Provider ${provider} has no credentials: set api_key, or aws_access_key_id and aws_secret_access_key (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)`, {
          provider, reason: "no_credentials",
        });
      }
      return sign(await signerOf(accessKeyId, secretAccessKey), req);
    },
  };
}

/** SigV4-signs the request as it will go on the wire: method, host, exact path and query, body bytes. */
export async function sign(signer: SignatureV4, req: UpstreamRequest, signingDate?: Date): Promise<UpstreamRequest> {
  const url = new URL(req.url);
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  // Only end-to-end headers are signed: a proxy may rewrite connection/user-agent/etc. (reference §2.7 step 2).
  const headers: Record<string, string> = { host: url.host };
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  const signed = await signer.sign({
    method: req.method ?? "POST",
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    headers,
    body: req.body,
  }, signingDate ? { signingDate } : undefined);
  return { ...req, headers: signed.headers as Record<string, string> };
}
