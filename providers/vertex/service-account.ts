// A Google service-account JSON key (reference protocols-2 §3.4): the fields the JWT grant needs. Read lazily on the
// first request, so a missing or broken file is an error on the requests that need it, never a crash at boot.
import { rememberSecret } from "../../core/secrets/registry.ts";
import { readFile } from "node:fs/promises";
import { DO_NOT_RETRY, GatewayError } from "../../core/errors.ts";

export interface ServiceAccount {
  clientEmail: string;
  privateKey: string;
  privateKeyId?: string;
  tokenUri: string;
  projectId?: string;
}

export const DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token";

/** The gateway's own configuration is wrong: not the caller's fault, and no retry will fix it. */
export function credentialsError(provider: string, message: string, cause?: unknown): GatewayError {
  return new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider}: ${message}`, {
    retryable: false, headers: DO_NOT_RETRY, details: { provider }, cause,
  });
}

export function parseServiceAccount(text: string, file: string, provider: string): ServiceAccount {
  let j: any;
  try {
    j = JSON.parse(text);
  } catch (err) {
    throw credentialsError(provider, `credentials_file ${file} is not JSON`, err);
  }
  if (j?.type !== undefined && j.type !== "service_account") {
    throw credentialsError(provider, `credentials_file ${file} is a "${j.type}" credential; a service-account key is needed`);
  }
  if (typeof j?.client_email !== "string" || typeof j?.private_key !== "string") {
    throw credentialsError(provider, `credentials_file ${file} has no client_email / private_key`);
  }
  // Never sent upstream, but a secret all the same: masked in any text an upstream returns (core/secrets).
  rememberSecret(j.private_key);
  if (typeof j.private_key_id === "string") rememberSecret(j.private_key_id);
  return {
    clientEmail: j.client_email,
    // Keys pasted through environment variables often arrive with literal "\n" sequences.
    privateKey: j.private_key.includes("\\n") ? j.private_key.replace(/\\n/g, "\n") : j.private_key,
    privateKeyId: typeof j.private_key_id === "string" ? j.private_key_id : undefined,
    tokenUri: typeof j.token_uri === "string" && j.token_uri ? j.token_uri : DEFAULT_TOKEN_URI,
    projectId: typeof j.project_id === "string" && j.project_id ? j.project_id : undefined,
  };
}

export async function readServiceAccount(file: string, provider: string): Promise<ServiceAccount> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw credentialsError(provider, `cannot read credentials_file ${file}: ${(err as Error).message}`, err);
  }
  return parseServiceAccount(text, file, provider);
}
