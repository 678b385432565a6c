// The gateway's asset service: keeps generated images/videos and hands out signed, expiring URLs for them.
// One per GatewayHandle (kept beside it, not in the config snapshot), so a reload never orphans stored assets.
import { resolve } from "node:path";
import type { IncomingHttpHeaders } from "node:http";
import type { GatewayHandle } from "../contracts/gateway.ts";
import { AssetStore, type AssetMeta } from "./store.ts";
import { defaultAssetsDir } from "./private-dir.ts";
import { isTrustedPeer } from "../net/trusted-proxies.ts";
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
    // server.assets_dir as the process started with it (read only at start): a reload that changes it must not
    // send new files where the next restart will not look, nor leave links signed meanwhile pointing nowhere.
    const started = gateway.startConfig;
    const configured = (started.raw.server as { assets_dir?: string } | undefined)?.assets_dir;
    const dir = configured ? resolve(started.dir, configured) : defaultAssetsDir();
    const store = new AssetStore(dir);
    const fallback = fallbackSigningSecret();
    // `||`: an empty secret is never a key (the config loader makes it unset; a config built in code may still hold one).
    a = { store, secret: () => gateway.config.server.signingSecret || fallback };
    byGateway.set(gateway, a);
    gateway.onClose(() => store.close());
  }
  return a;
}

/** Who asked: the request's headers and the connection's peer (a reverse proxy, behind one). */
export interface Requester {
  gateway: GatewayHandle;
  headers: IncomingHttpHeaders;
  remoteAddress?: string;
}

/** A host[:port] fit for a URL: a name or IPv4 address, or a bracketed IPv6 one. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+){0,126}\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const first = (h: string | string[] | undefined) => (typeof h === "string" ? h.split(",")[0]!.trim() : undefined);

/**
 * server.public_url, else the origin the client used to reach us: its Host, or X-Forwarded-Host/-Proto when the
 * connection comes from one of server.trusted_proxies (from anyone else they would let a client point the signed
 * URL at a host of its choosing). A Host that is no host name falls back to the listen address.
 */
export function publicBase({ gateway, headers, remoteAddress }: Requester): string {
  const { publicUrl, trustedProxies } = gateway.config.server;
  const { host: listenHost, port } = gateway.startConfig.server; // the address listened on: a change waits for a restart
  if (publicUrl) return publicUrl.replace(/\/+$/, "");
  const viaProxy = isTrustedPeer(trustedProxies, remoteAddress);
  const forwardedHost = viaProxy ? first(headers["x-forwarded-host"]) : undefined;
  const forwardedProto = viaProxy ? first(headers["x-forwarded-proto"])?.toLowerCase() : undefined;
  const host = [forwardedHost, headers.host].find((h) => h && HOST.test(h)) ?? `${listenHost.includes(":") ? `[${listenHost}]` : listenHost}:${port}`;
  const proto = forwardedProto === "https" || forwardedProto === "http" ? forwardedProto : "http";
  return `${proto}://${host}`;
}

export interface SignedAsset { url: string; expiresAt: number }

/** Sign a URL for an asset valid ttl seconds from now, making sure the file is kept at least that long. */
export async function signAsset(requester: Requester, meta: AssetMeta, ttlS: number): Promise<SignedAsset> {
  const a = assetsOf(requester.gateway);
  const expiresAt = Math.floor(Date.now() / 1000) + ttlS;
  await a.store.extend(meta.name, expiresAt * 1000 + 60_000);
  return { url: signedUrl(a.secret(), publicBase(requester), `${ASSET_ROUTE}/${meta.name}`, expiresAt), expiresAt };
}

/** Store bytes for ttl seconds (plus a minute of grace) and return the record. */
export function keepAsset(gateway: GatewayHandle, prefix: "img" | "vid", bytes: Uint8Array, contentType: string, ttlS: number): Promise<AssetMeta> {
  return assetsOf(gateway).store.put(prefix, bytes, contentType, Date.now() + ttlS * 1000 + 60_000);
}
