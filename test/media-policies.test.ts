// The project policies answer on the media endpoints with the spec's codes: 401 EXPIRED_API_KEY (rerank too), 402
// BUDGET_EXCEEDED, 403 MODEL_NOT_ALLOWED, 429 RATE_LIMITED with Retry-After.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { auth, mediaConfig } from "./helpers/media.ts";

const TIGHT = testKey("tightmedia");
const EXPIRED = testKey("expiredmedia");
const SLOW = testKey("slowmedia");
let gw: TestGateway;
beforeAll(async () => {
  const base = mediaConfig();
  gw = await startTestGateway({
    ...base,
    projects: {
      ...base.projects,
      tight: { keys: [keyEntry("tight", TIGHT)], allow_models: ["sim/*"], budget: { usd: "0.01", period: "month" } },
      expired: { keys: [keyEntry("expired", EXPIRED, { expires_at: "2020-01-01T00:00:00Z" })] },
      slow: { keys: [keyEntry("slow", SLOW, { rate_limits: { rpm: 1 } })] },
    },
  });
});
afterAll(() => gw.close());

const post = (path: string, body: unknown, key: string) => postJson(`${gw.baseURL}${path}`, body, auth(key));

describe("policies on the media endpoints", () => {
  it("403 MODEL_NOT_ALLOWED when the allowlist blocks the model", async () => {
    for (const [path, body] of [
      ["/images/generations", { model: "openai/gpt-image-1", prompt: "x" }],
      ["/embeddings", { model: "openai/text-embedding-3-small", input: "x" }],
    ] as const) {
      const r = await post(path, body, TIGHT);
      expect(r.status, path).toBe(403);
      expect(r.json.error.code).toBe("MODEL_NOT_ALLOWED");
    }
  });

  it("402 BUDGET_EXCEEDED when a video's worst case does not fit the budget", async () => {
    const r = await post("/videos", { model: "sim/reel", prompt: "x", duration: 4 }, TIGHT);
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe("BUDGET_EXCEEDED");
  });

  it("401 EXPIRED_API_KEY on images and rerank", async () => {
    const img = await post("/images/generations", { model: "sim/pixel", prompt: "x" }, EXPIRED);
    expect(img.status).toBe(401);
    expect(img.json.error.code).toBe("EXPIRED_API_KEY");
    const rr = await post("/rerank", { model: "sim/ranker", query: "q", documents: ["a"] }, EXPIRED);
    expect(rr.status).toBe(401);
    expect(rr.json.error.code).toBe("EXPIRED_API_KEY");
  });

  it("429 RATE_LIMITED with Retry-After past the key's requests per minute", async () => {
    expect((await post("/embeddings", { model: "sim/embed", input: "x" }, SLOW)).status).toBe(200);
    const r = await post("/rerank", { model: "sim/ranker", query: "q", documents: ["a"] }, SLOW);
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe("RATE_LIMITED");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
