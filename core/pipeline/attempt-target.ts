// Which endpoint each attempt called. An attempt record names only the provider and the gateway's model id, and a
// model may have several endpoints on one provider (deployments, dated snapshots) at different prices and limits:
// billing by those two names alone priced the served request at the first such endpoint's. Kept beside the record
// rather than in it, as records are shown to clients (error details, providerMetadata) and a target holds
// credentials.
import type { ModelAttempt } from "./context.ts";
import type { Target } from "../contracts/provider.ts";

const targets = new WeakMap<ModelAttempt, Target>();

/** Notes the endpoint this attempt calls (dispatch, when it makes the record). */
export function noteAttemptTarget(attempt: ModelAttempt, target: Target): void {
  targets.set(attempt, target);
}

/** The endpoint the attempt called; undefined for a record dispatch did not make. */
export function attemptTarget(attempt: ModelAttempt): Target | undefined {
  return targets.get(attempt);
}
