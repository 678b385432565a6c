// OAuth access tokens for a service account: a signed assertion exchanged at the key file's token_uri
// (grant_type jwt-bearer), cached and refreshed before it expires (5 minutes early, as google-auth-library does; half
// the lifetime for short-lived tokens), one exchange in flight at a time so concurrent requests share it.
import { DO_NOT_RETRY, GatewayError, clientClosed } from "../../core/errors.ts";
import { readTextPrefix, type UpstreamClient } from "../http.ts";
import { rememberSecret } from "../../core/secrets/registry.ts";
import { importSigningKey, signAssertion, type SigningKey } from "./jwt.ts";
import type { ServiceAccount } from "./service-account.ts";

export const REFRESH_EARLY_MS = 5 * 60_000;
const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

export interface AccessTokenOptions {
  provider: string;
  account: () => Promise<ServiceAccount>;
  /** Sends the exchange (its own pools; the token endpoint is another origin than the model host). */
  client: UpstreamClient;
  timeoutMs: number;
  refreshEarlyMs?: number;
}

export class AccessTokens {
  private cached?: { token: string; refreshAt: number };
  private inflight?: Promise<string>;
  private key?: { account: ServiceAccount; key: Promise<SigningKey> };
  /** Exchanges made so far (diagnostics and tests). */
  exchanges = 0;

  constructor(private readonly opts: AccessTokenOptions) {}

  /** A valid token: the cached one, or the one being fetched for another request, or a new exchange. */
  token(signal?: AbortSignal): Promise<string> {
    const c = this.cached;
    if (c && Date.now() < c.refreshAt) return Promise.resolve(c.token);
    this.inflight ??= this.exchange().finally(() => {
      this.inflight = undefined;
    });
    return signal ? abortable(this.inflight, signal) : this.inflight;
  }

  /** The upstream refused this token (401): forget it, so the next token() exchanges again. */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  private async exchange(): Promise<string> {
    const { provider } = this.opts;
    const account = await this.opts.account();
    if (this.key?.account !== account) this.key = { account, key: importSigningKey(account) };
    let key: SigningKey;
    try {
      key = await this.key.key;
    } catch (err) {
      this.key = undefined;
      throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider}: the service account's private_key cannot be used (${(err as Error).message})`, {
        retryable: false, headers: DO_NOT_RETRY, details: { provider }, cause: err,
      });
    }
    const issuedAt = Date.now();
    const assertion = await signAssertion(account, key, issuedAt);
    rememberSecret(assertion); // a token endpoint that echoes it must not hand it on (core/secrets)
    const body = new URLSearchParams({ grant_type: GRANT_TYPE, assertion }).toString();
    this.exchanges++;
    const where = account.tokenUri;
    let status: number;
    let text: string;
    try {
      const res = await this.opts.client.send(
        { url: where, headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }, body },
        AbortSignal.timeout(this.opts.timeoutMs),
      );
      status = res.status;
      text = await readTextPrefix(res, 16 * 1024);
    } catch (err) {
      throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} could not reach its token endpoint ${where}: ${(err as Error).message}`, {
        retryable: true, details: { provider, token_uri: where }, cause: err,
      });
    }
    let json: any;
    try {
      json = JSON.parse(text);
    } catch { /* described below */ }
    if (status === 200 && typeof json?.access_token === "string") {
      const lifetimeMs = (typeof json.expires_in === "number" && json.expires_in > 0 ? json.expires_in : 3600) * 1000;
      const early = Math.min(this.opts.refreshEarlyMs ?? REFRESH_EARLY_MS, lifetimeMs / 2);
      this.cached = { token: json.access_token, refreshAt: issuedAt + lifetimeMs - early };
      rememberSecret(json.access_token);
      return json.access_token;
    }
    const why = typeof json?.error === "string" ? `${json.error}${json.error_description ? `: ${json.error_description}` : ""}` : text.slice(0, 300) || "no body";
    // 4xx (invalid_grant: a wrong or deleted key, clock skew) is the gateway's configuration; 5xx may pass.
    const retryable = status === 429 || status >= 500;
    throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider}: the token endpoint ${where} refused the service account (HTTP ${status} ${why})`, {
      retryable,
      headers: retryable ? undefined : DO_NOT_RETRY,
      details: { provider, token_uri: where, upstream_status: status, upstream_error: json ?? text.slice(0, 300) },
    });
  }
}

/** Waits for a shared promise, but lets this caller leave when its own request is cancelled. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(cancelled(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

const cancelled = (signal: AbortSignal) => clientClosed(signal.reason);
