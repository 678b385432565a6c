// server.signing_secret is the HMAC key of every signed asset link: whoever knows it can mint or extend links. A short
// one can be guessed offline from a single link the gateway handed out, so it is refused at load, like a short
// metrics.token. An empty value (an unset `${MG_SIGNING_SECRET:-}`) is no secret at all: it counts as unset, and the
// gateway draws a random one (core/assets/secret.ts), never signing with an empty key.
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

export const MIN_SIGNING_SECRET_LENGTH = 16;

/** The configured secret, or undefined when it is unset or empty (the random per-process secret is used then). */
export function configuredSigningSecret(value: string | undefined): string | undefined {
  return value === "" ? undefined : value;
}

export function checkSigningSecret(config: GatewayConfig, at: At, problems: ConfigProblem[]): void {
  const secret = configuredSigningSecret(config.server?.signing_secret);
  if (secret === undefined || secret.length >= MIN_SIGNING_SECRET_LENGTH) return;
  // The value is not repeated: it is a secret, however weak.
  problems.push(at(["server", "signing_secret"], `server.signing_secret: must be at least ${MIN_SIGNING_SECRET_LENGTH} characters (it has ${secret.length}): a shorter secret can be guessed from one signed link; leave it unset or empty for a random one per process`));
}

/**
 * An empty secret written in the file (most often `${MG_SIGNING_SECRET:-}` with the variable unset): the operator
 * meant one, and would otherwise learn only when every link dies at the next restart.
 */
export function emptySigningSecretNotice(config: GatewayConfig): string | undefined {
  if (config.server?.signing_secret !== "") return undefined;
  return "server.signing_secret is empty (an unset variable?): links are signed with a random secret of this process, " +
    "so every image and video link dies at the next restart; set it to 16 characters or more to keep them";
}
