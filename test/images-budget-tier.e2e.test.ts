// An image request no model of its chain can serve (a size or quality none lists) is refused with the 400 naming the
// field whatever the budget: holding the dearest tier for it answered a nearly spent budget's 402 ("ask for fewer
// images") instead, advice that could not help.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";

let up: FakeOpenAIMedia;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  const config = mediaConfig({ providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } } });
  // Less than one $0.04 gpt-image-1 image.
  (config.projects.media as Record<string, unknown>).budget = { usd: "0.01" };
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw.close();
  await up.close();
});

const post = (body: Record<string, unknown>) => postJson(`${gw.baseURL}/images/generations`, { model: "openai/gpt-image-1", prompt: "a cat", ...body }, auth(LIVE));

describe("an image size no model serves, on a budget with no room for an image", () => {
  it("is the 400 naming size, not a 402", async () => {
    const r = await post({ size: "512x512" });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe("BAD_REQUEST");
    expect(r.json.error.details).toMatchObject({ field: "size", model: "openai/gpt-image-1" });
    expect(r.json.error.message).toContain("size 512x512 is not supported");
    expect(up.requests.length).toBe(0);
  });

  it("while a size it serves is still refused for the budget", async () => {
    const r = await post({ size: "1024x1024" });
    expect(r.status, r.text).toBe(402);
    expect(r.json.error.code).toBe("BUDGET_EXCEEDED");
  });
});
