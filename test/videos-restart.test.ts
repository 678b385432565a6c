// A finished video outlives the gateway process: with a durable store (sqlite), the same assets_dir and signing
// secret, a repeat with the same idempotency key after a restart returns the original asset with a fresh URL
// and starts no new job.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig } from "./helpers/media.ts";

const dir = mkdtempSync(join(tmpdir(), "mg-video-restart-"));
const config = () => ({
  ...mediaConfig({ server: { assets_dir: join(dir, "assets") } }),
  store: { kind: "sqlite", path: join(dir, "gateway.db") },
});
let gw: TestGateway | undefined;
afterAll(async () => {
  await gw?.close();
});

describe("video jobs across a restart", () => {
  it("replays the finished asset from the store, unbilled, with a refreshed URL", async () => {
    const key = ulid();
    const body = { model: "sim/reel", prompt: "survives restarts", duration: 2 };
    gw = await startTestGateway(config());
    const first = await postJson(`${gw.baseURL}/videos`, body, { ...auth(LIVE), "x-mg-idempotency-key": key });
    expect(first.status).toBe(200);
    await gw.close();

    await new Promise((r) => setTimeout(r, 1100)); // a later second: the refreshed link differs
    gw = await startTestGateway(config());
    const again = await postJson(`${gw.baseURL}/videos`, body, { ...auth(LIVE), "x-mg-idempotency-key": key });
    expect(again.status).toBe(200);
    expect(again.headers.get("x-mg-video-job")).toBe("attached");
    expect(again.json.id).toBe(first.json.id);
    expect(new URL(again.json.data[0].url).pathname).toBe(new URL(first.json.data[0].url).pathname);
    expect(again.json.data[0].expires_at).toBeGreaterThan(first.json.data[0].expires_at);
    const file = await fetch(again.json.data[0].url);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("video/mp4");
    const billed = (await gw.gateway.store.ledger({})).filter((e) => e.endpoint === "videos" && e.videoSeconds > 0);
    expect(billed).toHaveLength(1); // the first process's delivery only
    const other = await postJson(`${gw.baseURL}/videos`, { ...body, prompt: "a different body" }, { ...auth(LIVE), "x-mg-idempotency-key": key });
    expect(other.status).toBe(422);
  });
});
