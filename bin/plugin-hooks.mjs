// Module hooks for third-party plugins run by the gateway's bin (registered by bin/model-gateway.mjs before the first
// plugin import). `model-gateway/plugin` resolves to the running gateway's own public entry, from whatever folder the
// plugin lives in: a plugin symlinked from outside the gateway's folder (`npm install ../my-plugin`, a workspace)
// finds no model-gateway of its own, and one with its own copy (its devDependency) would get that copy's
// GatewayError, another class than the gateway's (its 403 a 500). Bundle files load as they are, without tsx.
import { readFile } from "node:fs/promises";

let entry, dist;

export function initialize(data) {
  ({ entry, dist } = data);
}

export async function resolve(specifier, context, next) {
  // Resolved down the chain (tsx's resolver marks the .ts entry of a gateway run from its sources for its loader).
  if (specifier === "model-gateway/plugin") return next(entry, context);
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!dist || !url.startsWith(dist)) return next(url, context);
  return { format: "module", source: await readFile(new URL(url)), shortCircuit: true };
}
