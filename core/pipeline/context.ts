// Per-request state. Plugins add their own fields by declaration merging:
//   declare module "../../core/pipeline/context.ts" { interface GatewayContext { myField?: X } }
import type { IncomingHttpHeaders } from "node:http";
import type { SseEvent } from "../sse/parse.ts";
import type { KeyRuntime, RuntimeConfig, ModelRuntime, ProjectRuntime } from "../config/runtime.ts";
import type { Target, Usage } from "../contracts/provider.ts";
import type { GatewayHandle } from "../contracts/gateway.ts";
import type { GatewayError } from "../errors.ts";

/** Which public endpoint a request came in on. */
export type EndpointKind = "chat" | "messages" | "responses" | "gemini" | "count_tokens" | "embeddings" | "rerank" | "images" | "videos" | "models" | "assets" | "responses_state" | "mcp";

/** How errors and streams are rendered back to this client. */
export type ClientProtocol = "openai" | "anthropic" | "responses" | "gemini";

export type GatewayResponse =
  | { kind: "json"; status: number; body: unknown }
  /** `stored`: a kept stream replayed (an idempotent replay, a response-cache hit), reaching no provider. */
  | { kind: "stream"; status: number; events: AsyncIterable<SseEvent>; stored?: true }
  | { kind: "bytes"; status: number; contentType: string; body: Uint8Array }
  /**
   * A web Response written as it is (the MCP endpoint's transport makes its own, SSE streams included). `onCut`: how
   * its body ends when a shutdown cuts it (the MCP endpoint answers the requests it carries with an error, and the
   * body then ends on its own); without it the body is cancelled there and then.
   */
  | { kind: "web"; response: Response; status: number; onCut?: (cut: GatewayError) => void };

export interface ModelAttempt {
  model: string;
  provider: string;
  status: number;
  errorCode?: string;
  latencyMs: number;
}

export interface AuthInfo {
  projectId: string;
  project: ProjectRuntime;
  keyId: string;
  sandbox: boolean;
  /** The key's record: where it is declared (gateway.yaml or the admin API) and its own limits. */
  key?: KeyRuntime;
}

/** How the request ended, handed to onFinish callbacks once the last byte was written (or the client left). */
export interface Outcome {
  status: number;
  error?: GatewayError;
  /** The client went away before the response was complete. */
  aborted: boolean;
  /** A stream that failed after its first byte (the error went to the client as an event). */
  streamError?: GatewayError;
}

/** What guardrails did to a request (plugins/guardrails): `action:rule` entries in order, and the rule that blocked it. */
export interface GuardrailNote {
  actions: string[];
  blocked?: string;
}

export interface GatewayContext {
  readonly requestId: string;
  readonly generationId: string;
  readonly endpoint: EndpointKind;
  readonly protocol: ClientProtocol;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The connection's peer address: the client's, or a reverse proxy's behind one (see server.trusted_proxies). */
  readonly remoteAddress?: string;
  /** Monotonic start time (performance.now()). */
  readonly startedAt: number;
  /** The config snapshot this request started on; a reload never changes it mid-request. */
  readonly config: RuntimeConfig;
  readonly gateway: GatewayHandle;
  /** Aborted when the client disconnects. */
  readonly signal: AbortSignal;
  /** The validated JSON body (inference endpoints) or undefined. */
  body: any;
  /** Route parameters (catalog and asset routes). */
  params: Record<string, string>;
  auth?: AuthInfo;
  model?: ModelRuntime;
  /** Ordered places to run the request (router), walked by dispatch. */
  targets: Target[];
  /** How many targets dispatch may try; fallback raises it above 1. */
  maxAttempts: number;
  attempts: ModelAttempt[];
  resolvedProvider?: string;
  usage?: Usage;
  /**
   * Model turns the request made when it loops (the Responses mcp tool: each turn a model call whose usage is added
   * into `usage`); unset: one. The meter's usage ceiling is this many turns' worth.
   */
  modelTurns?: number;
  /**
   * Each of those turns' usage as its upstream reported it (the turns `usage` adds up): a provider judges a
   * long-prompt price tier on each call's own prompt, so billing does too (core/money/long-context.ts).
   */
  turnUsages?: Usage[];
  /**
   * The endpoint that served each of those turns (a turn may fall back to another): each turn is billed at its own
   * endpoint's prices (core/metering/turn-cost.ts), never all at the last attempt's.
   */
  turnTargets?: Array<Target | undefined>;
  /** Time to first token, ms from startedAt. */
  ttftMs?: number;
  response?: GatewayResponse;
  /** Set by guardrails when a rule acted: the ledger record and the access log carry it. */
  guardrail?: GuardrailNote;
  /** Headers added to whatever response is sent, errors included (rate-limit headers, ...). */
  responseHeaders: Record<string, string>;
  /**
   * Set by the writer as the response's first byte goes out. From then on a failure cannot change the status: a
   * stream ends with the protocol's error event instead.
   */
  responseStarted?: boolean;
  /** Called once after the response is fully sent or the client went away. */
  onFinish(fn: (outcome: Outcome) => void | Promise<void>): void;
}
