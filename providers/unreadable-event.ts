// A stream event whose data is not the JSON its protocol sends (`data: {not json`): the provider's malformed answer,
// 502 UPSTREAM_ERROR and retryable (docs/routing.md "Upstream errors"), never relayed to the client as it came.
import { GatewayError } from "../core/errors.ts";

export const unreadableEvent = (provider: string) =>
  new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent a stream event that is not JSON`, {
    retryable: true, details: { provider, reason: "invalid_event" },
  });
