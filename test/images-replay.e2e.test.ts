// An image answer replayed under its idempotency key (24 hours) hands out freshly signed URLs: the original links
// live an hour, so a replay that repeated them gave a client coming back later a dead link to an image it paid for.
// An image the gateway no longer keeps is said so plainly, not replayed as a link that cannot work.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { ledgerRecordOf, postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { defaultPipeline } from "../plugins/index.ts";

const HOUR_MS = 3_600_000;
let up: FakeOpenAIMedia;
let gw: TestGateway;
const assetsDir = mkdtempSync(join(tmpdir(), "mg-image-replay-"));

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  gw = await startTestGateway(mediaConfig({
    providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } },
    server: { assets_dir: assetsDir },
  }));
});
afterAll(async () => {
  await gw.close();
  await up.close();
  rmSync(assetsDir, { recursive: true, force: true });
});
afterEach(() => vi.useRealTimers());

const body = { model: "openai/dall-e-3", prompt: "a dog", response_format: "url" };
const post = (key: string) => postJson(`${gw.baseURL}/images/generations`, body, { ...auth(LIVE), "x-mg-idempotency-key": key });
const expiresOf = (url: string) => Number(new URL(url).searchParams.get("expires"));

describe("replaying an image answer", () => {
  it("two hours later gives a fresh one-hour link to the same image, billed nothing", async () => {
    const key = ulid();
    const first = await post(key);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-mg-cost-usd")).toBe("0.04");
    const original = first.json.data[0].url as string;
    const bytes = Buffer.from(await (await fetch(original)).arrayBuffer());
    const upstreamCalls = up.requests.length;

    // Only the clock moves (Date), so the gateway's timers and sockets run as usual.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 2 * HOUR_MS });
    expect((await fetch(original)).status).toBe(410); // the original link is dead by now

    const again = await post(key);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-mg-cost-usd")).toBe("0");
    expect(up.requests.length).toBe(upstreamCalls);
    expect(again.json.id).toBe(first.json.id);
    const fresh = again.json.data[0].url as string;
    expect(new URL(fresh).pathname).toBe(new URL(original).pathname); // the same asset
    expect(expiresOf(fresh) - Date.now() / 1000).toBeGreaterThan(3500);
    const got = await fetch(fresh);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    // The replay wrote no bill of its own: the only record is the original's.
    expect((await ledgerRecordOf(gw, first.headers.get("x-request-id"))).costUsd).toBe("0.04");
    expect((await gw.gateway.store.ledger({})).some((e) => e.requestId === again.headers.get("x-request-id"))).toBe(false);
  });

  it("says plainly when the image is no longer kept, instead of replaying a link that cannot work", async () => {
    const key = ulid();
    const first = await post(key);
    expect(first.status, first.text).toBe(200);
    const name = new URL(first.json.data[0].url).pathname.split("/").pop()!;
    for (const f of readdirSync(assetsDir)) if (f.startsWith(name)) rmSync(join(assetsDir, f));

    const again = await post(key);
    expect(again.status).toBe(410);
    expect(again.json.error.code).toBe("INVALID_REQUEST");
    expect(again.json.error.details).toMatchObject({ reason: "asset_gone" });
    expect(again.json.error.message).toContain("no longer kept");
    expect(again.json.error.message).toContain("new idempotency key");
  });

  it("an image asked for with a key no idempotency plugin holds (a pipeline without it) is kept only while its link lives", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-image-no-idem-"));
    const other = await startTestGateway({
      ...mediaConfig({ providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } }, server: { assets_dir: dir } }),
      pipeline: defaultPipeline().filter((p) => p !== "idempotency"),
    });
    try {
      const r = await postJson(`${other.baseURL}/images/generations`, body, { ...auth(LIVE), "x-mg-idempotency-key": ulid() });
      expect(r.status, r.text).toBe(200);
      const name = new URL(r.json.data[0].url).pathname.split("/").pop()!;
      const keptFor = JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8")).keepUntil - Date.now();
      expect(keptFor).toBeLessThanOrEqual(HOUR_MS + 120_000); // its link's hour (and the sweep's minute), not a day
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
