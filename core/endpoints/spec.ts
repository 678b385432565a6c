// What an HTTP endpoint is to the core: its route, client protocol, body validator and terminal step.
import type { ValidateFunction } from "ajv";
import type { ClientProtocol, EndpointKind, GatewayContext } from "../pipeline/context.ts";

export interface EndpointSpec {
  kind: EndpointKind;
  method: "GET" | "POST" | "DELETE";
  /** Route under the server root, h3 syntax (`/api/v1/models/:creator/:model`). */
  route: string;
  protocol: ClientProtocol;
  /** Request body validator (POST endpoints). */
  validate?: ValidateFunction;
  /** Code for a body that fails validation: the spec uses BAD_REQUEST on images, videos and rerank. */
  invalidCode?: "INVALID_REQUEST" | "BAD_REQUEST";
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
    streamSchema?: string;
    tag?: string;
    /** Query parameters (GET lists). */
    query?: { name: string; schema: Record<string, unknown>; description?: string }[];
  };
}
