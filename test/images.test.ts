// Image generation: the official openai client, b64_json and gateway-signed URLs (404/410 rules), catalog limits
// checked before any upstream call, every field's validation, gpt-image vs dall-e upstream behaviour, timeouts.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { postJson, startTestGateway, type TestGateway } from "./helpers/gateway.ts";
import { auth, LIVE, mediaConfig, SANDBOX } from "./helpers/media.ts";
import { startFakeOpenAIMedia, OPENAI_KEY, type FakeOpenAIMedia } from "./upstreams/openai-media.ts";
import { signedUrl } from "../core/assets/sign.ts";
import { exchange, head } from "./helpers/raw-http.ts";
import { openAIShapeChecker } from "./helpers/openai-spec.ts";

const PNG_MAGIC = "89504e470d0a1a0a";
let up: FakeOpenAIMedia;
let gw: TestGateway;
let sandbox: OpenAI;
let live: OpenAI;
/** Every answer the openai client gets is also checked against OpenAI's own description (issue 26). */
const shapes = openAIShapeChecker();
afterEach(() => shapes.check());

beforeAll(async () => {
  up = await startFakeOpenAIMedia();
  gw = await startTestGateway(mediaConfig({
    providers: { openai: { protocol: "openai", base_url: up.baseUrl, api_key: OPENAI_KEY } },
    models: { "openai/slow-image": { type: "image", limits: { timeout_seconds: 1 }, endpoints: [{ provider: "openai", model: "gpt-image-1" }] } },
  }));
  sandbox = new OpenAI({ apiKey: SANDBOX, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
  live = new OpenAI({ apiKey: LIVE, baseURL: gw.baseURL, maxRetries: 0, fetch: shapes.fetch });
});
afterAll(async () => {
  await gw.close();
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
  up.failures.length = 0;
});

const post = (body: unknown, key = SANDBOX) => postJson(`${gw.baseURL}/images/generations`, body, auth(key));

describe("images on the simulator", () => {
  it("the official client gets b64_json PNGs of the requested size by default", async () => {
    const res = await sandbox.images.generate({ model: "sim/pixel", prompt: "a lighthouse at dusk", n: 2, size: "64x48" });
    const r = res as unknown as { id: string; model: string; usage: { input_tokens: number; output_images: number } };
    expect(r.id).toMatch(/^img_/);
    expect(r.model).toBe("sim/pixel");
    expect(res.created).toBeGreaterThan(1.7e9);
    expect(res.data).toHaveLength(2);
    for (const d of res.data!) {
      const png = Buffer.from(d.b64_json!, "base64");
      expect(png.subarray(0, 8).toString("hex")).toBe(PNG_MAGIC);
      expect(png.readUInt32BE(16)).toBe(64); // IHDR width
      expect(png.readUInt32BE(20)).toBe(48);
      expect(d.url).toBeUndefined();
      expect(d.revised_prompt).toBeUndefined();
    }
    expect(res.data![0]!.b64_json).not.toBe(res.data![1]!.b64_json);
    expect(r.usage.output_images).toBe(2);
    expect(r.usage.input_tokens).toBeGreaterThan(0);
  });

  it("response_format url: a gateway-served signed URL that needs no key; tampering gives 404, expiry 410", async () => {
    const r = await post({ model: "sim/pixel", prompt: "a red fox", size: "32x32", response_format: "url" });
    expect(r.status).toBe(200);
    const url = new URL(r.json.data[0].url);
    expect(r.json.data[0].b64_json).toBeUndefined();
    expect(url.origin).toBe(gw.url);
    expect(url.pathname).toMatch(/^\/api\/v1\/assets\/img_[a-f0-9]+\.png$/);
    const expires = Number(url.searchParams.get("expires"));
    expect(expires - Date.now() / 1000).toBeGreaterThan(3500);
    expect(expires - Date.now() / 1000).toBeLessThanOrEqual(3600);
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await got.arrayBuffer()).subarray(0, 8).toString("hex")).toBe(PNG_MAGIC);

    const tampered = new URL(url);
    tampered.searchParams.set("expires", String(expires + 100));
    expect((await fetch(tampered)).status).toBe(404);
    const unsigned = new URL(url);
    unsigned.search = "";
    const u = await fetch(unsigned);
    expect(u.status).toBe(404);
    expect((await u.json()).error.code).toBe("NOT_FOUND");
    const past = Math.floor(Date.now() / 1000) - 10;
    const expired = await fetch(signedUrl("test-signing-secret", gw.url, url.pathname, past));
    expect(expired.status).toBe(410);
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(8);
    const ranged = await fetch(url, { headers: { range: "bytes=0-7" } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).toString("hex")).toBe(PNG_MAGIC);
  });

  it("signed URLs believe X-Forwarded-Host/-Proto only from server.trusted_proxies; a Host that is no host name is not used", async () => {
    const forwarded = { ...auth(SANDBOX), "x-forwarded-host": "attacker.example", "x-forwarded-proto": "https" };
    const body = { model: "sim/pixel", prompt: "a red fox", size: "32x32", response_format: "url" };
    const untrusted = await postJson(`${gw.baseURL}/images/generations`, body, forwarded);
    expect(new URL(untrusted.json.data[0].url).origin).toBe(gw.url); // the Host this client used

    const behindProxy = await startTestGateway(mediaConfig({ server: { trusted_proxies: ["127.0.0.0/8", "::1"] } }));
    try {
      const trusted = await postJson(`${behindProxy.baseURL}/images/generations`, body, forwarded);
      expect(new URL(trusted.json.data[0].url).origin).toBe("https://attacker.example");
      // A Host header with a path in it is not a host: the configured listen address instead.
      const json = JSON.stringify(body);
      const x = await exchange(Number(new URL(gw.url).port), (w) => w.write(head("POST", "/api/v1/images/generations", {
        host: "evil.example/phish?", ...auth(SANDBOX), "content-type": "application/json", "content-length": Buffer.byteLength(json), connection: "close",
      }) + json).then(() => {}), { waitMs: 10_000 });
      const signed = x.responses[0]!.json.data[0].url as string;
      expect(signed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/assets\//);
    } finally {
      await behindProxy.close();
    }
  });

  it("validates every field with 400 BAD_REQUEST naming it", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ prompt: "" }, "prompt"],
      [{ prompt: "x".repeat(8001) }, "prompt"],
      [{ n: 0 }, "n"],
      [{ n: 9 }, "n"],
      [{ n: 1.5 }, "n"],
      [{ size: "big" }, "size"],
      [{ style: "baroque" }, "style"],
      [{ response_format: "png" }, "response_format"],
      [{ user: "u".repeat(257) }, "user"],
      [{ quality: 7 }, "quality"],
      [{ stream: true }, "stream"],
    ];
    for (const [extra, field] of cases) {
      const r = await post({ model: "sim/pixel", prompt: "ok", ...extra });
      expect(r.status, JSON.stringify(extra).slice(0, 80)).toBe(400);
      expect(r.json.error.code).toBe("BAD_REQUEST");
      expect(r.json.error.details.field).toBe(field);
    }
    const missing = await post({ model: "sim/pixel" });
    expect(missing.status).toBe(400);
    expect(missing.json.error.details.field).toBe("prompt");
    expect((await post({ model: "sim/pixel", prompt: "x".repeat(8000), size: "16x16" })).status).toBe(200);
  });

  it("capability mismatches are 403 MODEL_NOT_ALLOWED (a chat model, reference_image on a model without it)", async () => {
    const chat = await post({ model: "openai/gpt-4o-mini", prompt: "x" });
    expect(chat.status).toBe(403);
    expect(chat.json.error.code).toBe("MODEL_NOT_ALLOWED");
    expect(chat.json.error.message).toBe('Model "openai/gpt-4o-mini" is a language model; POST /api/v1/images/generations needs an image model');
    const ref = await post({ model: "openai/gpt-image-1", prompt: "x", reference_image: "iVBORw0KGgo=" });
    expect(ref.status).toBe(403);
    expect(ref.json.error.details.field).toBe("reference_image");
    const ok = await post({ model: "sim/pixel", prompt: "x", size: "16x16", reference_image: "https://example.com/cat.png" });
    expect(ok.status).toBe(200);
    const badRef = await post({ model: "sim/pixel", prompt: "x", reference_image: "ftp://example.com/cat.png" });
    expect(badRef.status).toBe(400);
  });
});

describe("images on an OpenAI-protocol upstream", () => {
  it("gpt-image: no response_format upstream, b64 back, usage from the upstream, no revised_prompt", async () => {
    const res = await live.images.generate({ model: "openai/gpt-image-1", prompt: "a blue bird", size: "1024x1024", quality: "high" });
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]!.body).toMatchObject({ model: "gpt-image-1", prompt: "a blue bird", n: 1, size: "1024x1024", quality: "high" });
    expect(up.requests[0]!.body.response_format).toBeUndefined();
    expect(Buffer.from(res.data![0]!.b64_json!, "base64").subarray(0, 8).toString("hex")).toBe(PNG_MAGIC);
    expect(res.data![0]!.revised_prompt).toBeUndefined();
    expect((res as any).usage).toEqual({ input_tokens: 3, input_tokens_details: { text_tokens: 3, image_tokens: 0 }, output_tokens: 272, total_tokens: 275, output_images: 1 }); // the upstream's count, OpenAI's fields and the spec's output_images
  });

  it("dall-e-3 with response_format url: b64 asked upstream, revised_prompt kept, only gateway URLs leave", async () => {
    const r = await post({ model: "openai/dall-e-3", prompt: "a castle", response_format: "url", style: "vivid" }, LIVE);
    expect(r.status).toBe(200);
    expect(up.requests[0]!.body).toMatchObject({ response_format: "b64_json", style: "vivid" });
    expect(r.json.data[0].revised_prompt).toBe("A detailed rendering of a castle");
    expect(r.json.data[0].url.startsWith(gw.url)).toBe(true);
    expect(r.text).not.toContain(up.origin);
    expect(r.text).not.toContain("upstream-secret");
    expect((await fetch(r.json.data[0].url)).status).toBe(200);
  });

  it("n above the model's limit and unsupported sizes are refused before any upstream call", async () => {
    const n = await post({ model: "openai/dall-e-3", prompt: "x", n: 2 }, LIVE);
    expect(n.status).toBe(400);
    expect(n.json.error).toMatchObject({ code: "BAD_REQUEST", details: { field: "n", max: 1 } });
    const size = await post({ model: "openai/dall-e-3", prompt: "x", size: "512x512" }, LIVE);
    expect(size.status).toBe(400);
    expect(size.json.error.details.field).toBe("size");
    expect(up.requests).toHaveLength(0);
  });

  it("an upstream that does not answer in time gives 504 UPSTREAM_TIMEOUT", async () => {
    up.failures.push("hang", "hang", "hang");
    const r = await post({ model: "openai/slow-image", prompt: "x" }, LIVE);
    expect(r.status).toBe(504);
    expect(r.json.error.code).toBe("UPSTREAM_TIMEOUT");
  });

  it("a provider's request error is 400 INVALID_REQUEST with its message; a provider failure is 502 UPSTREAM_ERROR", async () => {
    up.failures.push({ status: 400, body: { error: { message: "Your request was rejected by the safety system.", type: "invalid_request_error", param: null, code: "content_policy_violation" } } });
    const r = await post({ model: "openai/gpt-image-1", prompt: "x" }, LIVE);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("INVALID_REQUEST");
    expect(r.json.error.message).toContain("safety system");
    expect(r.json.error.details.upstream_error.code).toBe("content_policy_violation");
    const serverError = { status: 500, body: { error: { message: "The server had an error", type: "server_error", param: null, code: null } } };
    up.failures.push(serverError, serverError); // the fallback plugin retries a 5xx once
    const failed = await post({ model: "openai/gpt-image-1", prompt: "x" }, LIVE);
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe("UPSTREAM_ERROR");
  });
});
