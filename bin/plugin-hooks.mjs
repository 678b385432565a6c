// Module hooks for third-party plugins run by the bundled gateway (registered by bin/model-gateway.mjs before the
// first plugin import). `model-gateway/plugin` resolves to the sources' core/public/plugin.ts: send it to the
// bundle's plugin entry instead, or a plugin's GatewayError would be another class than the gateway's (its 403 a 500).
// Bundle files load as they are, without tsx's transform.
import { readFile } from "node:fs/promises";

let from, to, dist;

export function initialize(data) {
  ({ from, to, dist } = data);
}

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  return r.url.split("?")[0] === from ? { url: to, format: "module", shortCircuit: true } : r;
}

export async function load(url, context, next) {
  if (!url.startsWith(dist)) return next(url, context);
  return { format: "module", source: await readFile(new URL(url)), shortCircuit: true };
}
