import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../test/helpers/gateway.ts";
import { ASSET_ROUTE, IMAGE_URL_TTL_S, keepAsset, signAsset } from "./index.ts";
import { signedUrl } from "./sign.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ server: { signing_secret: "serve-test-secret" } });
});
afterAll(async () => {
  await gw?.close();
});

/** Keep `bytes` as an asset of `type` (as a driver does with what the upstream said) and fetch its signed link. */
async function served(type: string, bytes: string): Promise<Response> {
  const meta = await keepAsset(gw.gateway, "img", new TextEncoder().encode(bytes), type, IMAGE_URL_TTL_S);
  const { url } = await signAsset({ gateway: gw.gateway, headers: { host: new URL(gw.url).host }, remoteAddress: "127.0.0.1" }, meta, IMAGE_URL_TTL_S);
  return fetch(url);
}

describe("signed assets as a browser gets them", () => {
  it("an image is served as its type, never sniffed, and runs nothing", async () => {
    const res = await served("image/png", "\x89PNG fake");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(res.headers.get("content-disposition")).toBeNull();
  });

  it("a type an upstream chose that could run script (SVG, HTML, a header smuggled in) is a download, not a page on the gateway's origin", async () => {
    for (const type of ["image/svg+xml", "text/html", "image/x;text/html"]) {
      const res = await served(type, `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`);
      expect(res.headers.get("content-type"), type).toBe("application/octet-stream");
      expect(res.headers.get("content-disposition")).toBe("attachment");
      expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    }
  });

  it("an expired link is 410 with a code that says so, not NOT_FOUND (kept for a link that was never valid)", async () => {
    const meta = await keepAsset(gw.gateway, "img", new TextEncoder().encode("\x89PNG fake"), "image/png", IMAGE_URL_TTL_S);
    const path = `${ASSET_ROUTE}/${meta.name}`;
    const expired = await fetch(signedUrl("serve-test-secret", gw.url, path, Math.floor(Date.now() / 1000) - 10));
    expect(expired.status).toBe(410);
    const { error } = await expired.json();
    expect(error.code).toBe("INVALID_REQUEST");
    expect(error.details).toMatchObject({ reason: "link_expired" });
    expect(error.message).toContain("idempotency key");

    const forged = await fetch(signedUrl("another-secret", gw.url, path, Math.floor(Date.now() / 1000) + 60));
    expect(forged.status).toBe(404);
    expect((await forged.json()).error.code).toBe("NOT_FOUND");
  });
});
