// The gateway's asset service: keeps generated images/videos and hands out signed, expiring URLs for them.
// One per GatewayHandle (kept beside it, not in the config snapshot), so a reload never orphans stored assets.
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { IncomingHttpHeaders } from "node:http";
import type { GatewayHandle } from "../contracts/gateway.ts";
import { AssetStore, type AssetMeta } from "./store.ts";
import { signedUrl } from "./sign.ts";
import { fallbackSigningSecret } from "./secret.ts";

/** Signed image URLs live about an hour, video URLs about a day (spec, Limits). */
export const IMAGE_URL_TTL_S = 3600;
export const VIDEO_URL_TTL_S = 24 * 3600;
export const ASSET_ROUTE = "/api/v1/assets";

export interface Assets {
  store: AssetStore;
  /** The HMAC secret: server.signing_secret, else the deployment's fallback (core/assets/secret.ts). */
  secret(): string;
}

const byGateway = new WeakMap<GatewayHandle, Assets>();

export function assetsOf(gateway: GatewayHandle): Assets {
  let a = byGateway.get(gateway);
  if (!a) {
    const configured = (gateway.config.raw.server as { assets_dir?: string } | undefined)?.assets_dir;
    const dir = configured ? resolve(gateway.config.dir, configured) : join(tmpdir(), "model-gateway-assets");
    const store = new AssetStore(dir);
    const fallback = fallbackSigningSecret();
    a = { store, secret: () => gateway.config.server.signingSecret ?? fallback };
    byGateway.set(gateway, a);
    gateway.onClose(() => store.close());
  }
  return a;
}

/** server.public_url, else the origin the client used to reach us. */
export function publicBase(gateway: GatewayHandle, headers: IncomingHttpHeaders): string {
  const configured = gateway.config.server.publicUrl;
  if (configured) return configured.replace(/\/+$/, "");
  const host = (headers["x-forwarded-host"] as string | undefined)?.split(",")[0]?.trim() || headers.host || `${gateway.config.server.host}:${gateway.config.server.port}`;
  const proto = (headers["x-forwarded-proto"] as string | undefined)?.split(",")[0]?.trim() || "http";
  return `${proto}://${host}`;
}

export interface SignedAsset { url: string; expiresAt: number }

/** Sign a URL for an asset valid ttl seconds from now, making sure the file is kept at least that long. */
export async function signAsset(gateway: GatewayHandle, headers: IncomingHttpHeaders, meta: AssetMeta, ttlS: number): Promise<SignedAsset> {
  const a = assetsOf(gateway);
  const expiresAt = Math.floor(Date.now() / 1000) + ttlS;
  await a.store.extend(meta.name, expiresAt * 1000 + 60_000);
  return { url: signedUrl(a.secret(), publicBase(gateway, headers), `${ASSET_ROUTE}/${meta.name}`, expiresAt), expiresAt };
}

/** Store bytes for ttl seconds (plus a minute of grace) and return the record. */
export function keepAsset(gateway: GatewayHandle, prefix: "img" | "vid", bytes: Uint8Array, contentType: string, ttlS: number): Promise<AssetMeta> {
  return assetsOf(gateway).store.put(prefix, bytes, contentType, Date.now() + ttlS * 1000 + 60_000);
}
