// Providers: every model endpoint's circuit state, time to first token and throughput percentiles (last hour) and
// uptime (last day), the failing ones first (/models); and each provider, enabled or why not, with how many of its
// endpoints' circuits are open (/providers).
import { api } from "../api.ts";
import { usePoll } from "../poll.ts";
import { Table, type Column } from "../table.tsx";
import { ms, pct } from "../format.ts";
import type { ModelsAnswer, ProvidersAnswer } from "../types.ts";

type Endpoint = ModelsAnswer["models"][number]["endpoints"][number] & { model: string };

const CIRCUIT_RANK = { open: 0, half_open: 1, closed: 2 } as const;

/** Failing first: open circuits, then half-open, then by uptime (lowest first; none yet last). */
export function failingFirst(a: Endpoint, b: Endpoint): number {
  return CIRCUIT_RANK[a.circuit] - CIRCUIT_RANK[b.circuit]
    || (a.uptime_last_1d ?? 2) - (b.uptime_last_1d ?? 2)
    || a.model.localeCompare(b.model) || a.provider.localeCompare(b.provider);
}

const circuit = (c: Endpoint["circuit"]) => <span class={`circuit ${c}`}>{c === "half_open" ? "half open" : c}</span>;

export function Providers() {
  const { data: models, error: e1 } = usePoll((signal) => api<ModelsAnswer>("/models", { signal }), 5_000, []);
  const { data: providers, error: e2 } = usePoll((signal) => api<ProvidersAnswer>("/providers", { signal }), 5_000, []);
  const endpoints = (models?.models ?? []).flatMap((m) => m.endpoints.map((e) => ({ ...e, model: m.id }))).sort(failingFirst);
  const ps = [...(providers?.providers ?? [])].sort((a, b) => b.circuits.open - a.circuits.open || b.circuits.half_open - a.circuits.half_open || Number(a.enabled) - Number(b.enabled) || a.name.localeCompare(b.name));
  const columns: Column<Endpoint>[] = [
    { key: "model", label: "Model" },
    { key: "provider", label: "Provider" },
    // A retired endpoint stays listed, marked: the router sends it nothing (docs/routing.md).
    { key: "upstream_model", label: "Upstream model", render: (e) => <span>{e.upstream_model}{e.retires ? <span class={e.retired ? "muted" : "warn"}>{e.retired ? " retired " : " retires "}{e.retires}</span> : null}</span> },
    { key: "circuit", label: "Circuit", sort: (e) => CIRCUIT_RANK[e.circuit], render: (e) => circuit(e.circuit) },
    { key: "uptime", label: "Uptime (1 d)", num: true, sort: (e) => e.uptime_last_1d, render: (e) => <span class={e.uptime_last_1d !== null && e.uptime_last_1d < 0.99 ? "bad" : undefined}>{pct(e.uptime_last_1d, 2)}</span> },
    { key: "ttft50", label: "First token p50", num: true, sort: (e) => e.latency_last_1h?.p50 ?? null, render: (e) => ms(e.latency_last_1h?.p50) },
    { key: "ttft95", label: "p95", num: true, sort: (e) => e.latency_last_1h?.p95 ?? null, render: (e) => ms(e.latency_last_1h?.p95) },
    { key: "tps50", label: "Tokens/s p50", num: true, sort: (e) => e.throughput_last_1h?.p50 ?? null, render: (e) => e.throughput_last_1h ? String(e.throughput_last_1h.p50) : "—" },
    { key: "tps95", label: "p95", num: true, sort: (e) => e.throughput_last_1h?.p95 ?? null, render: (e) => e.throughput_last_1h ? String(e.throughput_last_1h.p95) : "—" },
  ];
  return (
    <div>
      <section>
        <h2>Providers</h2>
        {e2 ? <p class="error">{e2}</p> : null}
        <div class="cards" data-testid="provider-cards">
          {ps.map((p) => (
            <div key={p.name} class={`card ${!p.enabled ? "off" : p.circuits.open ? "bad" : p.circuits.half_open ? "warn" : "good"}`} data-provider={p.name}>
              <h3>{p.name} <span class="muted small">{p.protocol ?? ""}</span></h3>
              {p.enabled ? (
                <p>{p.endpoints} endpoints: {p.circuits.closed} closed{p.circuits.half_open ? `, ${p.circuits.half_open} half open` : ""}{p.circuits.open ? `, ${p.circuits.open} open` : ""}</p>
              ) : <p class="muted">off: {p.disabled_reason}</p>}
            </div>
          ))}
        </div>
      </section>
      <section>
        <h2>Endpoints <span class="muted small">failing first; percentiles over the last hour, uptime over the last day</span></h2>
        {e1 ? <p class="error">{e1}</p> : null}
        <Table testId="endpoints" columns={columns} rows={endpoints} rowKey={(e) => `${e.model}|${e.provider}`} empty={models ? "No model endpoints" : "Loading…"} />
      </section>
    </div>
  );
}
