// A `pipeline:` given without `auth` asks no request for a key: every caller, known or not, is served on the
// operator's own provider keys, with no project to record it against, bill or limit (the spec answers a missing key
// with 401). Never a valid choice, so a problem (check, start and reload refuse it), not a notice.
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";

type At = (path: (string | number)[], message: string, atKey?: boolean) => ConfigProblem;

export function checkAuthInPipeline(config: GatewayConfig, names: readonly string[], at: At, problems: ConfigProblem[]): void {
  if (!Array.isArray(config.pipeline) || names.includes("auth")) return;
  problems.push(at(["pipeline"], "pipeline: has no auth, so every request would be served unauthenticated (no key asked for, nothing recorded, " +
    "no budget or limit) on the operator's provider keys: add auth, first"));
}
