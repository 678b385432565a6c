// What an HTTP endpoint is to the core: its route, client protocol, body validator and terminal step.
import type { ValidateFunction } from "ajv";
import type { ClientProtocol, EndpointKind, GatewayContext } from "../pipeline/context.ts";
import { withHead } from "../http/route-methods.ts";

export interface EndpointSpec {
  kind: EndpointKind;
  method: "GET" | "POST" | "DELETE";
  /** Route under the server root, h3 syntax (`/api/v1/models/:creator/:model`). */
  route: string;
  /**
   * A Google-style custom method on the resource the route's `**` names (`/v1beta/models/{model}:generateContent`):
   * every endpoint with an action shares the wildcard route, and the text after the request path's last `:` picks
   * one (core/endpoints/gemini/route.ts). The route parameters are then `model` (as sent) and `action`.
   */
  action?: string;
  protocol: ClientProtocol;
  /** Request body validator (POST endpoints). */
  validate?: ValidateFunction;
  /** Before validation: a shape the spec allows read as the one the validator and the plugins know. */
  normalize?(body: unknown): void;
  /** Code for a body that fails validation: the spec uses BAD_REQUEST on images, videos and rerank. */
  invalidCode?: "INVALID_REQUEST" | "BAD_REQUEST";
  /**
   * After the body validated: fold what the URL says into it (the Gemini endpoints' model and stream flag), so every
   * plugin reads the request where it reads it on the other endpoints. May throw a GatewayError.
   */
  prepare?(ctx: GatewayContext): void;
  /**
   * A kept answer of this endpoint (an idempotency replay) made current before it is sent again: images sign their
   * asset URLs anew. Returns the body to send, leaving the kept one as it is; may throw a GatewayError.
   */
  refreshKept?(ctx: GatewayContext, body: unknown): Promise<unknown>;
  /** The implicit last step: produce ctx.response (usually by calling a provider). */
  terminal(ctx: GatewayContext): Promise<void>;
  /** OpenAPI description. */
  openapi: {
    summary: string;
    /** Defaults to `<method>_<kind>`; needed when several routes share a kind (the catalog). */
    operationId?: string;
    /** components.schemas names (see core/openapi.ts). */
    requestSchema?: string;
    responseSchema?: string;
    /** The answer to a request with anthropic-version instead (the catalog answers Anthropic clients in their shape). */
    anthropicResponseSchema?: string;
    streamSchema?: string;
    tag?: string;
    /** Query parameters (GET lists); optional unless `required`. */
    query?: { name: string; schema: Record<string, unknown>; description?: string; required?: boolean }[];
    /** Request headers it takes beyond the common ones (core/openapi-headers.ts REQUEST_HEADERS). */
    headers?: string[];
    /** Headers of its success answer beyond the common ones (core/openapi-headers.ts HEADERS). */
    responseHeaders?: string[];
    /** Its stream's events come as an `event: <type>` line and a data line (Messages, Responses), not data lines alone. */
    namedEvents?: boolean;
    /** A 202 with no body, and when (MCP: a POST of notifications or responses only). */
    accepted?: string;
    /** A route kept only to refuse by name what the gateway does not serve: documented with its errors and no success. */
    notServed?: boolean;
  };
}

/**
 * The methods an endpoint's route is served with: its own, and HEAD beside GET (route-methods.ts withHead), except on
 * MCP, whose GET opens the session's event stream, a stream with no head of its own (the MCP transport refuses HEAD).
 */
export const endpointMethods = (spec: EndpointSpec): string[] => (spec.kind === "mcp" ? [spec.method] : withHead(spec.method));
