// The HMAC secret for signed asset URLs when `server.signing_secret` is unset. One per deployment where the gateway
// can arrange it: the workers of `start --workers N` take the primary's (handed to them in their environment), so a
// URL signed by one worker is honoured by every other behind the same port. Separate replicas cannot agree on a
// random secret by themselves: sharedSecretWarning says so at start.
import { randomBytes } from "node:crypto";

/** How the cluster primary hands its secret to the workers it forks (internal: not an operator setting). */
export const WORKER_SECRET_ENV = "MG_WORKER_SIGNING_SECRET";

let processSecret: string | undefined;

/** This process's secret: the primary's in a worker, else 32 random bytes drawn once per process. */
export function fallbackSigningSecret(): string {
  if (processSecret) return processSecret;
  const inherited = process.env[WORKER_SECRET_ENV];
  // Out of the environment once read, so nothing this process spawns (a plugin's helper) inherits it.
  delete process.env[WORKER_SECRET_ENV];
  processSecret = inherited && inherited.length >= 32 ? inherited : newSigningSecret();
  return processSecret;
}

export function newSigningSecret(): string {
  return randomBytes(32).toString("hex");
}

/**
 * Why a deployment on this config may hand out links its other replicas refuse, or undefined. A shared (Redis) store
 * is how replicas are run; without a configured secret each replica draws its own.
 */
export function sharedSecretWarning(config: { server: { signingSecret?: string }; store: { kind: string } }): string | undefined {
  if (config.server.signingSecret || config.store.kind !== "redis") return undefined;
  return "server.signing_secret is not set: this replica signs image and video URLs with a random secret of its own, " +
    "so another replica sharing this Redis store answers its links with 404 (and no link outlives a restart). " +
    "Set server.signing_secret to one value on every replica, e.g. signing_secret: \"${MG_SIGNING_SECRET}\" " +
    "(the workers of one --workers N process already share one).";
}
