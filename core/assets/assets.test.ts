import { describe, expect, it } from "vitest";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultAssetsDir } from "./private-dir.ts";
import { signature, signedUrl, verify } from "./sign.ts";
import { AssetStore } from "./store.ts";

describe("signed asset URLs", () => {
  it("verifies path + expiry; forged or moved links are invalid, old ones expired", () => {
    const now = 1_800_000_000;
    const url = new URL(signedUrl("s3cret", "http://gw", "/api/v1/assets/img_x.png", now + 60));
    expect(url.pathname).toBe("/api/v1/assets/img_x.png");
    const exp = url.searchParams.get("expires");
    const sig = url.searchParams.get("sig");
    expect(verify("s3cret", "/api/v1/assets/img_x.png", exp, sig, now)).toBe("ok");
    expect(verify("s3cret", "/api/v1/assets/img_y.png", exp, sig, now)).toBe("invalid");
    expect(verify("other", "/api/v1/assets/img_x.png", exp, sig, now)).toBe("invalid");
    expect(verify("s3cret", "/api/v1/assets/img_x.png", String(now + 61), sig, now)).toBe("invalid");
    expect(verify("s3cret", "/api/v1/assets/img_x.png", exp, sig, now + 61)).toBe("expired");
    expect(verify("s3cret", "/p", null, sig, now)).toBe("invalid");
    expect(verify("s3cret", "/p", "12abc", signature("s3cret", "/p", 12), now)).toBe("invalid");
  });
});

describe("asset store", () => {
  it("keeps, extends and sweeps assets by their retention", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-assets-"));
    const store = new AssetStore(dir);
    const now = Date.now();
    const a = await store.put("img", new Uint8Array([1, 2, 3]), "image/png", now + 1000);
    const b = await store.put("vid", new Uint8Array([4]), "video/mp4", now + 1000);
    expect(a.name).toMatch(/^img_[0-9a-f]{32}\.png$/);
    expect(b.name).toMatch(/\.mp4$/);
    expect(Array.from((await store.read(a.name))!)).toEqual([1, 2, 3]);
    expect(await store.meta("../etc/passwd")).toBeUndefined();
    await store.extend(b.name, now + 10_000);
    expect(await store.sweep(now + 5000)).toBe(1);
    expect(await store.meta(a.name)).toBeUndefined();
    expect((await store.meta(b.name))?.contentType).toBe("video/mp4");
    expect(readdirSync(dir).sort()).toEqual([b.name, `${b.name}.json`].sort());
    store.close();
  });

  it("keeps assets private to the gateway's user: directory 0700, files 0600", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "mg-assets-")), "nested", "assets");
    const store = new AssetStore(dir);
    const a = await store.put("img", new Uint8Array([1]), "image/png", Date.now() + 1000);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, a.name)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, `${a.name}.json`)).mode & 0o777).toBe(0o600);
    store.close();
  });

  it("tightens an existing directory that others could read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-assets-"));
    chmodSync(dir, 0o755);
    const store = new AssetStore(dir);
    await store.put("img", new Uint8Array([1]), "image/png", Date.now() + 1000);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    store.close();
  });

  it("refuses a symlink in its place (one planted in a shared /tmp), and uses the directory once it is put right", async () => {
    const base = mkdtempSync(join(tmpdir(), "mg-assets-"));
    mkdirSync(join(base, "elsewhere"));
    symlinkSync(join(base, "elsewhere"), join(base, "assets"));
    const store = new AssetStore(join(base, "assets"));
    await expect(store.put("img", new Uint8Array([1]), "image/png", Date.now() + 1000)).rejects.toThrow(/is not a directory but a symbolic link/);
    expect(readdirSync(join(base, "elsewhere"))).toEqual([]);
    store.close();
  });

  it.runIf(process.getuid?.() === 0)("refuses a directory another user made first (run as root: chowned to nobody)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-assets-"));
    chownSync(dir, 65534, 65534);
    const store = new AssetStore(dir);
    await expect(store.put("img", new Uint8Array([1]), "image/png", Date.now() + 1000)).rejects.toThrow(/belongs to uid 65534/);
    expect(readdirSync(dir)).toEqual([]);
    store.close();
  });

  it("defaults to a directory of this user's own under the temporary directory", () => {
    expect(defaultAssetsDir()).toBe(join(tmpdir(), `model-gateway-assets-${process.getuid!()}`));
  });
});
