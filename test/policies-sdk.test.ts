// Every error of the policy plugins through the official openai client: the right error class, the code in the
// body, and Retry-After driving the SDK's own retry.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { ulid } from "ulid";
import { startTestGateway, keyEntry, testKey, type TestGateway } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { chat, KEY, policyConfig } from "./helpers/policy-config.ts";

const BROKE = testKey("broke");
const LIMITED = testKey("limited");

describe("policy errors through the openai client", () => {
  let fake: FakeOpenAI;
  let gw: TestGateway;
  const attempts: { status: number; retryAfter: string | null }[] = [];
  const client = (key: string, maxRetries = 0) => new OpenAI({
    apiKey: key, baseURL: gw.baseURL, maxRetries,
    fetch: async (input, init) => {
      const res = await fetch(input as string, init as RequestInit);
      attempts.push({ status: res.status, retryAfter: res.headers.get("retry-after") });
      return res;
    },
  });
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const config = policyConfig(fake.baseUrl) as any;
    config.projects.broke = { keys: [keyEntry("bk", BROKE)], budget: { usd: "0.00001", period: "day" } };
    config.projects.limited = { keys: [keyEntry("lk", LIMITED, { rate_limits: { rpm: 30 } })] };
    gw = await startTestGateway(config);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function failure(p: Promise<unknown>) {
    try {
      await p;
    } catch (e) {
      return e as InstanceType<typeof OpenAI.APIError>;
    }
    throw new Error("expected the call to fail");
  }

  it("403 MODEL_NOT_ALLOWED -> PermissionDeniedError", async () => {
    const e = await failure(client(KEY).chat.completions.create(chat("anthropic/claude-x") as any));
    expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(e.status).toBe(403);
    expect(e.code).toBe("MODEL_NOT_ALLOWED");
    expect(e.param).toBe("model");
  });

  it("400 for a model of the wrong type -> BadRequestError naming `model`", async () => {
    const e = await failure(client(KEY).chat.completions.create(chat("openai/text-embedding-3-small") as any));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.param).toBe("model");
  });

  it("402 BUDGET_EXCEEDED -> APIError with status 402, not retried", async () => {
    attempts.length = 0;
    const e = await failure(client(BROKE, 2).chat.completions.create(chat() as any));
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect(e.status).toBe(402);
    expect(e.code).toBe("BUDGET_EXCEEDED");
    expect(attempts).toHaveLength(1);
  });

  it("429 RATE_LIMITED -> RateLimitError; Retry-After drives the SDK's retry", async () => {
    const c = client(LIMITED);
    let e: InstanceType<typeof OpenAI.APIError> | undefined;
    for (let i = 0; i < 40 && !e; i++) {
      try {
        await c.chat.completions.create(chat() as any);
      } catch (err) {
        e = err as InstanceType<typeof OpenAI.APIError>;
      }
    }
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e!.code).toBe("RATE_LIMITED");
    expect(Number(e!.headers?.get("retry-after"))).toBeGreaterThan(0);

    // With retries on, the SDK waits as told and the next attempt fits: two attempts, success.
    attempts.length = 0;
    const ok = await client(LIMITED, 3).chat.completions.create(chat() as any);
    expect(ok.choices[0]!.message.content).toBeTruthy();
    expect(attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(Number(attempts[0]!.retryAfter)).toBeGreaterThan(0);
  });

  it("422 for an idempotency key reused with another body -> UnprocessableEntityError", async () => {
    const key = ulid();
    await client(KEY).chat.completions.create(chat() as any, { headers: { "Idempotency-Key": key } });
    const e = await failure(client(KEY).chat.completions.create(chat("openai/gpt-4o-mini", { max_tokens: 3 }) as any, { headers: { "Idempotency-Key": key } }));
    expect(e).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.param).toBe("Idempotency-Key");
  });

  it("400 for a malformed idempotency key -> BadRequestError naming the header", async () => {
    const e = await failure(client(KEY).chat.completions.create(chat() as any, { headers: { "x-mg-idempotency-key": "abc" } }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.param).toBe("x-mg-idempotency-key");
  });

  it("a replay comes back through the SDK as the same completion", async () => {
    const key = ulid();
    const first = await client(KEY).chat.completions.create(chat() as any, { headers: { "Idempotency-Key": key } });
    const again = await client(KEY).chat.completions.create(chat() as any, { headers: { "Idempotency-Key": key } }).withResponse();
    expect(again.data).toEqual(first);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
  });
});
