// The admin API's answers as the console reads them (docs/admin-api.md). Money is a decimal string, times ISO 8601.

export type Dimension = "project" | "key" | "model" | "provider" | "endpoint";

export interface UsageRow {
  bucket_start?: string;
  group: Partial<Record<Dimension, string>>;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost_usd: string;
}

export interface Usage {
  since: string;
  until: string;
  group_by: Dimension[];
  bucket: "hour" | "day" | "none";
  total: { requests: number; cost_usd: string };
  rows: UsageRow[];
}

export interface BudgetState {
  period: string;
  period_start: string;
  resets_at: string | null;
  limit_usd: string;
  spent_usd: string;
  reserved_usd: string;
  remaining_usd: string;
  exhausted: boolean;
}

export interface Budgets {
  at: string;
  projects: { project: string; budget: BudgetState | null }[];
  keys: { project: string; key: string; source: string; budget: BudgetState }[];
}

export interface Attempt {
  model: string;
  provider: string;
  status: number;
  latency_ms: number;
  error?: string;
}

export interface RequestRecord {
  generation_id: string;
  request_id: string;
  at: string;
  project: string;
  key: string;
  endpoint: string;
  model: string;
  provider: string;
  status: number;
  outcome: string;
  sandbox: boolean;
  estimated: boolean;
  attempts: number;
  attempt_list?: Attempt[];
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost_usd: string;
  latency_ms: number;
  ttft_ms: number | null;
}

export interface RequestPage {
  requests: RequestRecord[];
  next: string | null;
}

export interface KeyView {
  project: string;
  id: string;
  source: "yaml" | "api";
  status: "active" | "revoked" | "expired";
  name: string | null;
  sandbox: boolean | null;
  hint: string | null;
  created_at: string | null;
  created_by: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  rate_limits: { rpm?: number; tpm?: number } | null;
  budget: { usd: string; period: string } | null;
  rotated_from: string | null;
  replaced_by: string | null;
  last_used_at: string | null;
}

export interface Percentiles { p50: number; p95: number }

export interface ModelsAnswer {
  models: {
    id: string;
    type: string;
    endpoints: {
      provider: string;
      upstream_model: string;
      circuit: "closed" | "half_open" | "open";
      throughput_last_1h: Percentiles | null;
      latency_last_1h: Percentiles | null;
      uptime_last_1d: number | null;
    }[];
  }[];
}

export interface ProvidersAnswer {
  providers: {
    name: string;
    protocol: string | null;
    enabled: boolean;
    disabled_reason?: string;
    endpoints: number;
    circuits: { closed: number; half_open: number; open: number };
  }[];
}

export interface ConfigState {
  config: { file: string; status: "ok" | "reload_refused"; problems?: string[] };
  store: { up: boolean; kind: string; reason?: string; since?: string; error?: string; spool?: unknown; pending_releases?: number };
  key_cache: { keys: number; synced_at: string | null; refresh_ms: number };
  counts: { projects: number; models: number; providers: number; admin_keys: number };
}

export interface ConfigLoaded {
  file: string;
  started_at: string;
  last_reload: { at: string; trigger: string; ok: boolean; problems?: string[]; changes?: unknown } | null;
  pipeline: { name: string; source: "builtin" | "plugin"; module?: string }[];
  providers: { name: string; protocol: string | null; enabled: boolean; disabled_reason?: string }[];
  models: { id: string; type: string; endpoints: string[] }[];
  projects: { id: string; keys: number; budget: { usd: string; period?: string } | null; rate_limits: { rpm?: number; tpm?: number } | null; allow_models: string[] | null }[];
  admin_keys: { id: string; scope: string; expires_at: string | null; revoked: boolean }[];
  mcp_servers: string[];
}

export interface TrafficPoint {
  t: number;
  ms: number;
  requests: number;
  ok: number;
  client_errors: number;
  server_errors: number;
  latency_ms: Percentiles | null;
  ttfb_ms: Percentiles | null;
  input_tokens: number;
  output_tokens: number;
  in_flight: number;
}

export interface Traffic {
  at: string;
  pid: number;
  step_ms: number;
  window_ms: number;
  sampling_since: string | null;
  points: TrafficPoint[];
  ttft: { slot_ms: number; points: { t: number; p50: number | null; p95: number | null; count: number }[] };
}
