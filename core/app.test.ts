// The answers the app makes outside the endpoints (health, unknown routes) go out as the endpoints' do: with their
// length, not chunked.
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
  ])("GET %s answers %i with a content-length", async (path, status, text) => {
    const res = await fetch(`${gw.url}${path}`);
    const body = await res.text();
    expect(res.status).toBe(status);
    expect(body).toContain(text);
    expect(res.headers.get("transfer-encoding")).toBeNull();
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
  });
});
