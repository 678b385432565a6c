// The answers the app makes outside the endpoints (health, unknown routes) go out as the endpoints' do: with their
// length, not chunked; a path under /admin/v1 is the admin API's whether a route takes it or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../test/helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../test/upstreams/openai.ts";
import { policyConfig } from "../test/helpers/policy-config.ts";

describe("the app's own answers", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gw = await startTestGateway(policyConfig(fake.baseUrl));
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it.each([
    ["/healthz", 200, "ok"],
    ["/api/v1/no-such-endpoint", 404, "NOT_FOUND"],
    // Outside /admin/v1, as before: metrics have their own listener, the console is its page.
    ["/metrics", 404, "metrics are served on"],
    ["/console", 200, "model-gateway console"],
  ])("GET %s answers %i with a content-length", async (path, status, text) => {
    const res = await fetch(`${gw.url}${path}`);
    const body = await res.text();
    expect(res.status).toBe(status);
    expect(body).toContain(text);
    expect(res.headers.get("transfer-encoding")).toBeNull();
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
  });

  // No admin_keys here: the admin API is off, and says so the same way on every path of it, routed or not.
  it.each([
    ["GET", "/admin/v1/nope"],
    ["PUT", "/admin/v1/usage"],
    ["DELETE", "/admin/v1/keys/acme/ci"],
  ])("with no admin keys configured, %s %s is the admin API's 401, with no-store, as a route of it is", async (method, path) => {
    for (const headers of [{}, { authorization: "Bearer mg_admin_some_key_nobody_configured_00" }] as Record<string, string>[]) {
      const routed = await fetch(`${gw.url}/admin/v1/usage`, { headers });
      const res = await fetch(`${gw.url}${path}`, { method, headers });
      expect({ status: res.status, body: await res.json(), allow: res.headers.get("allow"), cache: res.headers.get("cache-control") })
        .toEqual({ status: 401, body: await routed.json(), allow: null, cache: "no-store" });
    }
    const off = await fetch(`${gw.url}${path}`, { method, headers: { authorization: "Bearer mg_admin_some_key_nobody_configured_00" } });
    expect(((await off.json()) as any).error.message).toMatch(/^No admin keys are configured/);
  });
});
