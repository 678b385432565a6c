// One ledger record as every store keeps it (the operator plane's contract, core/contracts/ledger-reader.ts, builds
// on it; kept apart from types.ts so the two import each other in one direction only).

/** `blocked`: a guardrail refused the request (or cut its answer). */
export type LedgerOutcome = "ok" | "error" | "aborted" | "stream_error" | "blocked";

/** One record per metered request. Money is exact: a decimal string and integer pico-USD. */
export interface LedgerEntry {
  generationId: string;
  requestId: string;
  /** ms since the epoch: when the record was written (the request ended). */
  ts: number;
  /**
   * ms since the epoch: when the request's budget hold was made, present only when that was on an earlier UTC day
   * than `ts`. Its cost counts in the budget periods containing this moment (those it was reserved in), not `ts`'s;
   * usage reports still count it at `ts`. Absent: `ts`.
   */
  chargedAt?: number;
  keyId: string;
  project: string;
  endpoint: string;
  model: string;
  provider: string;
  attempts: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  images: number;
  videoSeconds: number;
  searchUnits: number;
  /** Paid server-tool web searches (priced by the endpoint's web_search); absent on records from before they were billed. */
  webSearches?: number;
  costUsd: string;
  costPico: bigint;
  latencyMs: number;
  ttftMs: number | null;
  status: number;
  outcome: LedgerOutcome;
  sandbox: boolean;
  /** Usage was estimated (the client left before the provider reported it). */
  estimated: boolean;
  /** MCP tool calls (endpoint "mcp_tool", provider = server, model = tool): bytes of the result. */
  toolBytes?: number;
  /** MCP tool calls, only with mcp.log_arguments: the arguments as JSON. */
  toolArguments?: string;
  /** What guardrails did, `action:rule` entries joined by commas (block:no-secrets,redact:pii); absent when none acted. */
  guardrail?: string;
  /** Answered from the response cache (provider "cache", no upstream call), billed at the hit price; absent: false. */
  cacheHit?: boolean;
}
