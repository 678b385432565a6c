// The one public entry for third-party plugins: `import { definePlugin, GatewayError } from "model-gateway/plugin"`
// (package.json "exports"). Everything a plugin needs is re-exported here, so internal files can move without
// breaking published plugins; when one moves, only this file changes. Keep it to core/ imports.
import type { GatewayContext } from "../pipeline/context.ts";

export { definePlugin } from "../pipeline/define.ts";
export type { Next, PluginDefinition, PluginInstance } from "../pipeline/define.ts";
export { GatewayError } from "../errors.ts";
export type { ErrorCode, GatewayErrorInit } from "../errors.ts";
export type {
  AuthInfo,
  ClientProtocol,
  EndpointKind,
  GatewayContext,
  GatewayResponse,
  ModelAttempt,
  Outcome,
} from "../pipeline/context.ts";
export type { SseEvent } from "../sse/parse.ts";
// What setup() receives: the running gateway as plugins see it (not the class, whose types reach the whole server).
export type { GatewayHandle as Gateway } from "../contracts/gateway.ts";

// Derived from the context rather than imported, so where these contracts live is not part of the API.
/** One place the request may run (provider, upstream model, price), as chosen by the router. */
export type Target = GatewayContext["targets"][number];
/** Token (and media) counts of the answer, set by the provider step. */
export type Usage = NonNullable<GatewayContext["usage"]>;
