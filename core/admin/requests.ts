// Request search over the ledger (newest first, paged by an opaque cursor) and one request's full record.
import { GatewayError, invalidRequest } from "../errors.ts";
import type { LedgerRecord } from "../contracts/ledger-reader.ts";
import { intParam, iso, stringParam, timeParam } from "./query.ts";
import type { AdminAnswer, AdminRequest } from "./route.ts";

export function recordView(e: LedgerRecord) {
  return {
    generation_id: e.generationId, request_id: e.requestId, at: iso(e.ts), project: e.project, key: e.keyId, endpoint: e.endpoint,
    model: e.model, provider: e.provider, status: e.status, outcome: e.outcome, sandbox: e.sandbox, estimated: e.estimated,
    attempts: e.attempts,
    ...(e.attemptList ? { attempt_list: e.attemptList.map((a) => ({ model: a.model, provider: a.provider, status: a.status, latency_ms: a.latencyMs, ...(a.error ? { error: a.error } : {}) })) } : {}),
    input_tokens: e.inputTokens, output_tokens: e.outputTokens, cache_read_tokens: e.cacheReadTokens, cache_write_tokens: e.cacheWriteTokens,
    reasoning_tokens: e.reasoningTokens, images: e.images, video_seconds: e.videoSeconds, search_units: e.searchUnits, web_searches: e.webSearches ?? 0,
    cost_usd: e.costUsd, latency_ms: e.latencyMs, ttft_ms: e.ttftMs, cache_hit: e.cacheHit === true,
    // Only on a record admitted on an earlier UTC day than it was written: the budget periods its cost is spent in.
    ...(e.chargedAt !== undefined ? { charged_at: iso(e.chargedAt) } : {}),
    ...(e.guardrail ? { guardrail: e.guardrail } : {}),
    ...(e.toolBytes !== undefined ? { tool_bytes: e.toolBytes } : {}), ...(e.toolArguments !== undefined ? { tool_arguments: e.toolArguments } : {}),
  };
}

export async function searchRequests(r: AdminRequest): Promise<AdminAnswer> {
  const q = r.query;
  const status = stringParam(q, "status");
  if (status !== undefined && !/^([1-5]xx|[1-5]\d\d)$/.test(status)) throw invalidRequest("Invalid query parameter status: an HTTP status (429) or a class (4xx)", "status");
  const page = await r.gateway.ledgerReader.search({
    generationId: stringParam(q, "generation_id"), requestId: stringParam(q, "request_id"), project: stringParam(q, "project"),
    key: stringParam(q, "key"), model: stringParam(q, "model"), provider: stringParam(q, "provider"), endpoint: stringParam(q, "endpoint"),
    status, since: timeParam(q, "since"), until: timeParam(q, "until"), limit: intParam(q, "limit", 1, 500, 50), cursor: stringParam(q, "cursor"),
  });
  return { body: { requests: page.records.map(recordView), next: page.next ?? null } };
}

export async function getRequest(r: AdminRequest): Promise<AdminAnswer> {
  const id = r.params.generation_id!;
  const rec = await r.gateway.ledgerReader.get(id);
  if (!rec) throw new GatewayError(404, "NOT_FOUND", `No request with generation id ${JSON.stringify(id.slice(0, 100))} in the ledger`, { details: { generation_id: id.slice(0, 100) } });
  return { body: recordView(rec) };
}
