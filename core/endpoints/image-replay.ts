// An image answer kept under an idempotency key (24 hours) made current before it is replayed: its signed URLs live
// an hour, so repeating them handed a client coming back later a dead link to an image it paid for. Each URL is
// signed again for the asset it names, as a repeated /videos request's is (signAsset, which also keeps the file as
// long as the new link lives). An image the gateway no longer keeps is a plain 410, never a link that cannot work.
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { ASSET_ROUTE, assetsOf, signAsset, IMAGE_URL_TTL_S } from "../assets/index.ts";

/** The asset a gateway-signed URL names (whatever origin or path prefix server.public_url gave it), else undefined. */
export function assetNameOf(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const at = path.lastIndexOf(`${ASSET_ROUTE}/`);
  return at < 0 ? undefined : path.slice(at + ASSET_ROUTE.length + 1);
}

function gone(): GatewayError {
  // 410 as an expired link is (core/assets/serve.ts), with the code the gateway gives that.
  return new GatewayError(410, "INVALID_REQUEST",
    "The images of the answer this idempotency key replays are no longer kept by the gateway (kept 24 hours under a key, in this gateway's assets_dir); send the request with a new idempotency key to generate them again", {
      details: { reason: "asset_gone" },
    });
}

/** The kept body with every asset URL freshly signed; the kept body itself is left as it is (the store may share it). */
export async function refreshImageUrls(ctx: GatewayContext, body: unknown): Promise<unknown> {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return body;
  const store = assetsOf(ctx.gateway).store;
  const fresh = await Promise.all(data.map(async (item: Record<string, unknown>) => {
    const name = typeof item?.url === "string" ? assetNameOf(item.url) : undefined;
    if (name === undefined) return item; // b64_json: the bytes are in the answer
    const meta = await store.meta(name);
    if (!meta) throw gone();
    return { ...item, url: (await signAsset(ctx, meta, IMAGE_URL_TTL_S)).url };
  }));
  return { ...(body as object), data: fresh };
}
