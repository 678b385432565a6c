import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { GatewayError } from "../../core/errors.ts";
import { UpstreamClient } from "../http.ts";
import { AccessTokens } from "./access-tokens.ts";
import { readServiceAccount } from "./service-account.ts";
import { makeServiceAccount, startFakeTokenEndpoint, type FakeTokenEndpoint, type ServiceAccountKey } from "../../test/upstreams/vertex-auth.ts";

let tokenEndpoint: FakeTokenEndpoint;
let sa: ServiceAccountKey;
const client = new UpstreamClient("vertex", { timeoutMs: 5000 });

beforeAll(async () => {
  tokenEndpoint = await startFakeTokenEndpoint();
  sa = makeServiceAccount(tokenEndpoint.tokenUri);
  tokenEndpoint.trust(sa);
});
afterAll(async () => {
  await client.close();
  await tokenEndpoint.close();
});

function source(file = sa.file) {
  return new AccessTokens({ provider: "vertex", account: () => readServiceAccount(file, "vertex"), client, timeoutMs: 5000 });
}

// Only Date is faked: the gateway's cache, its assertion's iat/exp and the fake endpoint's checks move together.
const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);
afterEach(() => void vi.useRealTimers());

describe("AccessTokens", () => {
  it("exchanges once, reuses the token, and refreshes 5 minutes before it expires", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const tokens = source();
    const before = tokenEndpoint.exchanges;
    const t1 = await tokens.token();
    expect(tokenEndpoint.valid(t1)).toBe(true); // the fake verified the signed assertion
    expect(await tokens.token()).toBe(t1);
    advance(3599_000 - 5 * 60_000 - 1000); // just inside the window
    expect(await tokens.token()).toBe(t1);
    advance(2000); // inside the last 5 minutes: a new exchange
    const t2 = await tokens.token();
    expect(t2).not.toBe(t1);
    expect(tokenEndpoint.exchanges - before).toBe(2);
    expect(tokens.exchanges).toBe(2);
  });

  it("concurrent callers share one exchange; invalidate() forces the next", async () => {
    const tokens = source();
    const before = tokenEndpoint.exchanges;
    const all = await Promise.all(Array.from({ length: 20 }, () => tokens.token()));
    expect(new Set(all).size).toBe(1);
    expect(tokenEndpoint.exchanges - before).toBe(1);
    tokens.invalidate("some-other-token");
    expect(await tokens.token()).toBe(all[0]);
    tokens.invalidate(all[0]!);
    expect(await tokens.token()).not.toBe(all[0]);
    expect(tokenEndpoint.exchanges - before).toBe(2);
  });

  it("short-lived tokens are refreshed at half their lifetime, not on every call", async () => {
    tokenEndpoint.expiresIn = 60;
    try {
      vi.useFakeTimers({ toFake: ["Date"] });
      const tokens = source();
      const t1 = await tokens.token();
      advance(29_000);
      expect(await tokens.token()).toBe(t1);
      advance(2000);
      expect(await tokens.token()).not.toBe(t1);
    } finally {
      tokenEndpoint.expiresIn = 3599;
    }
  });

  it("a refused exchange is a clear, non-retryable 502 naming the token endpoint; the next call tries again", async () => {
    // A key the endpoint does not know: its signature cannot verify against the trusted public key.
    const impostor = makeServiceAccount(tokenEndpoint.tokenUri, { email: sa.json.client_email });
    const tokens = source(impostor.file);
    const err = await tokens.token().catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(502);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(tokenEndpoint.tokenUri);
    expect(err.message).toMatch(/invalid_grant: Invalid JWT Signature/);
    expect(tokenEndpoint.refusals.at(-1)).toBe("Invalid JWT Signature.");
    // A 503 from the token endpoint may pass: retryable; a later call exchanges again and succeeds.
    const ok = source();
    tokenEndpoint.failures.push({ status: 503, body: { error: "internal_failure", error_description: "backend unavailable" } });
    const e2 = await ok.token().catch((e) => e);
    expect(e2.retryable).toBe(true);
    expect(tokenEndpoint.valid(await ok.token())).toBe(true);
  });

  it("an unreachable token endpoint and a missing key file are errors, not crashes", async () => {
    const down = makeServiceAccount("http://127.0.0.1:9/token");
    const e1 = await source(down.file).token().catch((e) => e);
    expect(e1.message).toMatch(/could not reach its token endpoint http:\/\/127\.0\.0\.1:9\/token/);
    expect(e1.retryable).toBe(true);
    const e2 = await source("/nonexistent/sa.json").token().catch((e) => e);
    expect(e2.message).toMatch(/cannot read credentials_file \/nonexistent\/sa\.json/);
    expect(e2.retryable).toBe(false);
  });
});
