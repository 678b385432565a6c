// A request's downloaded media bytes (server.url_fetch.max_bytes_in_flight, one project at most half) are given back
// once its answer is written, not after its onFinish callbacks: a third-party onFinish that never settles held its
// project's share for ever, so that project's next big image was a 429 no retry could pass (review rev-f11f13, 4).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { PNG_1x1, startHttpsLoopback, TEST_CERT, type HttpsLoopback } from "./helpers/https-loopback.ts";
import type { Resolver, UrlFetchOptions } from "../core/net/url-fetch.ts";
import { builtins } from "../core/builtins.ts";

const KEY = testKey("media-before-finishers");
/** The smallest pool: 32 MiB a project, so one 19 MiB image (25.3 MiB as base64) fits, two do not. */
const POOL = 64 * 1024 * 1024;
const NINETEEN_MIB = Buffer.concat([PNG_1x1, Buffer.alloc(19 * 1024 * 1024)]);
const model = "google/gemini-2.5-flash";
const dir = mkdtempSync(join(tmpdir(), "mg-hang-finish-"));
/** Lets the hung onFinish callbacks go, so the gateway can close. */
const hung: Array<() => void> = [];
(globalThis as { __mgHungFinishers?: Array<() => void> }).__mgHungFinishers = hung;
// An onFinish that settles only when the test lets it (a ledger on a dead database, a plugin's lost callback).
writeFileSync(join(dir, "hang.mjs"), `export default { name: "hang", async handle(ctx, next) {
  if (ctx.headers["x-hang"]) ctx.onFinish(() => new Promise((resolve) => globalThis.__mgHungFinishers.push(resolve)));
  await next();
} };`);
let gemini: FakeGemini;
let gw: TestGateway;
let img: HttpsLoopback;
const resolver: Resolver = async (host) => (host === "img.test" ? [{ address: "127.0.0.1", family: 4 }] : []);

beforeAll(async () => {
  gemini = await startFakeGemini();
  img = await startHttpsLoopback((_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(NINETEEN_MIB));
  gw = await startTestGateway({
    server: { url_fetch: { allow_hosts: ["img.test"], max_bytes_in_flight: POOL } },
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { [model]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash" }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
    plugins: { hang: { module: join(dir, "hang.mjs") } },
    pipeline: ["auth", "hang", ...builtins.defaultPipeline().filter((n) => n !== "auth")],
  });
  Object.assign(gw.gateway.config.server.urlFetch as UrlFetchOptions, { resolver, ca: TEST_CERT });
});
afterAll(async () => {
  for (const resolve of hung) resolve();
  await gw?.close();
  await gemini?.close();
  await img?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (path: string) => ({ model, messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url: `https://img.test:${img.port}${path}` } }] }] });

describe("media bytes in flight and onFinish callbacks", () => {
  it("a request answered while its onFinish still runs has given its image's bytes back: the project's next big image is served, not a 429", async () => {
    const first = await postJson(`${gw.baseURL}/chat/completions`, ask("/nineteen.png?a"), { authorization: `Bearer ${KEY}`, "x-hang": "1" });
    expect(first.status, first.text).toBe(200);
    for (let i = 0; i < 100 && hung.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(hung).toHaveLength(1); // its onFinish is still pending
    const second = await postJson(`${gw.baseURL}/chat/completions`, ask("/nineteen.png?b"), { authorization: `Bearer ${KEY}` });
    expect(second.status, second.text).toBe(200);
  });
});
