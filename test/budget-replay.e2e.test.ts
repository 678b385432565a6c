// A keyed request's retry that only replays what its key holds bills nothing, so the budget reserves nothing for it:
// the image request that spent the budget could not be collected by its retry (402 "ask for fewer images"), though its
// images were paid and kept. A new request (another key, or a key whose answer is gone) is still refused.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";

let up: FakeOpenAIMedia;
let gw: TestGateway;
const assetsDir = mkdtempSync(join(tmpdir(), "mg-budget-replay-"));

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  const config = mediaConfig({
    providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } },
    server: { assets_dir: assetsDir },
  });
  // One dall-e-3 image costs $0.04: after the first, $0.01 is left, no room for a second.
  (config.projects.media as Record<string, unknown>).budget = { usd: "0.05" };
  gw = await startTestGateway(config);
});
afterAll(async () => {
  await gw.close();
  await up.close();
  rmSync(assetsDir, { recursive: true, force: true });
});

const body = { model: "openai/dall-e-3", prompt: "the last budget dog", response_format: "url" };
const post = (key: string, b: unknown = body) => postJson(`${gw.baseURL}/images/generations`, b, { ...auth(LIVE), "x-mg-idempotency-key": key });

describe("a keyed retry on a spent budget", () => {
  it("replays the images its key paid for instead of a 402, and a new request is still refused", async () => {
    const key = ulid();
    const first = await post(key);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-mg-cost-usd")).toBe("0.04");
    const calls = up.requests.length;

    const retry = await post(key);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("x-mg-cost-usd")).toBe("0");
    expect(retry.json.id).toBe(first.json.id);
    expect(up.requests.length).toBe(calls);

    const fresh = await post(ulid());
    expect(fresh.status, fresh.text).toBe(402);
    expect(fresh.json.error.code).toBe("BUDGET_EXCEEDED");
    expect(up.requests.length).toBe(calls);
  });

  it("reserves after all when the kept answer is gone by the time the request runs, so nothing runs past the budget", async () => {
    const store = gw.gateway.store;
    const real = store.idempotencyBegin.bind(store);
    // The budget's look finds an answer; the idempotency plugin's claim then finds it expired.
    const spy = vi.spyOn(store, "idempotencyBegin").mockImplementation(async (scope, hash, owner, ...rest) =>
      owner.startsWith("probe:") ? { state: "done", response: { kind: "json", status: 200, headers: {}, body: {} } } : real(scope, hash, owner, ...rest));
    try {
      const calls = up.requests.length;
      const r = await post(ulid());
      expect(r.status, r.text).toBe(402);
      expect(r.json.error.code).toBe("BUDGET_EXCEEDED");
      expect(up.requests.length).toBe(calls);
    } finally {
      spy.mockRestore();
    }
  });
});
