// The policy errors on the messages endpoint through the official Anthropic client: Anthropic's error shape and
// classes, and Retry-After driving its retry.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { ulid } from "ulid";
import { startTestGateway, keyEntry, testKey, type TestGateway } from "./helpers/gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { policyConfig } from "./helpers/policy-config.ts";

const BROKE = testKey("broke");
const LIMITED = testKey("limited");
const OK = testKey("fine");
const hi = [{ role: "user" as const, content: "Hi" }];
const model = "anthropic/claude-x";

describe("policy errors through the Anthropic client", () => {
  let fake: FakeAnthropic;
  let gw: TestGateway;
  const client = (key: string, maxRetries = 0) => new Anthropic({ apiKey: key, baseURL: `${gw.url}/api`, maxRetries });
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    const config = policyConfig("http://127.0.0.1:9/v1") as any;
    config.providers.claude = { protocol: "anthropic", base_url: fake.baseUrl, api_key: FAKE_ANTHROPIC_KEY };
    config.models[model].endpoints = [{ provider: "claude", model: "claude-x", pricing: { input: "0.000003", output: "0.000015" } }];
    config.projects.broke = { keys: [keyEntry("bk", BROKE)], budget: { usd: "0.00001" } };
    config.projects.limited = { keys: [keyEntry("lk", LIMITED, { rate_limits: { rpm: 30 } })] };
    config.projects.fine = { keys: [keyEntry("fk", OK)] };
    gw = await startTestGateway(config);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("402 BUDGET_EXCEEDED is a billing_error APIError with status 402", async () => {
    const e = await client(BROKE).messages.create({ model, max_tokens: 50, messages: hi }).catch((err) => err);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect(e.status).toBe(402);
    expect(e.error).toMatchObject({ type: "error", error: { type: "billing_error", code: "BUDGET_EXCEEDED" } });
  });

  it("429 RATE_LIMITED is a RateLimitError, and Retry-After drives the retry", async () => {
    let e: any;
    for (let i = 0; i < 40 && !e; i++) e = await client(LIMITED).messages.create({ model, max_tokens: 5, messages: hi }).then(() => undefined, (err) => err);
    expect(e).toBeInstanceOf(Anthropic.RateLimitError);
    expect(e.error.error.code).toBe("RATE_LIMITED");
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThan(0);
    const before = fake.requests.length;
    const ok = await client(LIMITED, 3).messages.create({ model, max_tokens: 5, messages: hi });
    expect(ok.type).toBe("message");
    expect(fake.requests.length).toBe(before + 1);
  });

  it("an idempotency key reused with another body is a 422 UnprocessableEntityError; a replay is identical", async () => {
    const key = ulid();
    const first = await client(OK).messages.create({ model, max_tokens: 20, messages: hi }, { headers: { "Idempotency-Key": key } });
    const again = await client(OK).messages.create({ model, max_tokens: 20, messages: hi }, { headers: { "Idempotency-Key": key } }).withResponse();
    expect(again.data).toEqual(first);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    const e = await client(OK).messages.create({ model, max_tokens: 21, messages: hi }, { headers: { "Idempotency-Key": key } }).catch((err) => err);
    expect(e).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    expect(e.error.error.code).toBe("INVALID_REQUEST");
  });
});
