// Overview: the ledger's totals over the last hour, day and month (/usage); the live traffic over the last hour,
// every 10 s, of this process or, under --workers, of every worker (/traffic: request rate by status class, error
// ratio, latency and time to first byte, tokens; time to first token per 5 minutes); and the ledger's requests,
// tokens and spend per hour or day.
import { useMemo, useRef, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import { usePoll } from "../poll.ts";
import { TimeChart } from "../chart.tsx";
import { int, ms, pct, usd, when } from "../format.ts";
import type { Traffic, TrafficPoint, Usage } from "../types.ts";
import { bucketStarts } from "../buckets.ts";

const WINDOWS = [
  { id: "1h", label: "Last hour" },
  { id: "24h", label: "Last 24 hours" },
  { id: "30d", label: "Last 30 days" },
] as const;

function Tiles() {
  const { data, error } = usePoll(
    (signal) => Promise.all(WINDOWS.map((w) => api<Usage>(`/usage${qs({ since: w.id })}`, { signal }))),
    15_000, [],
  );
  return (
    <section class="tiles" data-testid="tiles">
      {error ? <p class="error">{error}</p> : null}
      {WINDOWS.map((w, i) => {
        const u = data?.[i];
        const row = u?.rows[0];
        const requests = u?.total.requests ?? 0;
        return (
          <div class="tile" key={w.id} data-window={w.id}>
            <h3>{w.label}</h3>
            <p class="since muted">{u ? `since ${when(u.since)}` : "…"}</p>
            <dl>
              <dt>Spend</dt><dd data-figure="cost">{u ? usd(u.total.cost_usd) : "…"}</dd>
              <dt>Requests</dt><dd data-figure="requests">{u ? int(requests) : "…"}</dd>
              <dt>Errors</dt><dd data-figure="errors">{u ? `${int(row?.errors ?? 0)} (${pct(requests ? (row?.errors ?? 0) / requests : null)})` : "…"}</dd>
              <dt>Input tokens</dt><dd data-figure="input_tokens">{u ? int(row?.input_tokens ?? 0) : "…"}</dd>
              <dt>Output tokens</dt><dd data-figure="output_tokens">{u ? int(row?.output_tokens ?? 0) : "…"}</dd>
            </dl>
          </div>
        );
      })}
    </section>
  );
}

/**
 * The last hour of steps, kept across polls: each poll asks only for the steps after the newest one held. Each
 * process samples on its own clock (with --workers every worker samples the whole cluster): when another process
 * answers, its hour replaces the one held.
 */
function useTraffic() {
  const [kept, setKept] = useState<{ points: TrafficPoint[]; ttft: Traffic["ttft"] | null; since: string | null; pid?: number; scope?: Traffic["scope"] }>({ points: [], ttft: null, since: null });
  const held = useRef<{ pid?: number; newest: number }>({ newest: 0 });
  const { error } = usePoll(async (signal) => {
    const t = await api<Traffic>(`/traffic${qs({ after: held.current.newest || undefined })}`, { signal });
    const same = held.current.pid === undefined || held.current.pid === t.pid;
    const answer = same ? t : await api<Traffic>("/traffic", { signal }); // the new process's whole hour
    const fresh = answer.points.filter((p) => !same || p.t > held.current.newest);
    held.current = { pid: answer.pid, newest: fresh.length ? fresh[fresh.length - 1]!.t : same ? held.current.newest : 0 };
    const cutoff = Date.parse(answer.at) - answer.window_ms;
    setKept((k) => ({ points: [...(same ? k.points : []), ...fresh].filter((p) => p.t > cutoff), ttft: answer.ttft, since: answer.sampling_since, pid: answer.pid, scope: answer.scope }));
  }, 5_000, []);
  return { ...kept, error };
}

function LiveCharts() {
  const { points, ttft, since, pid, scope, error } = useTraffic();
  const c = useMemo(() => {
    const x = points.map((p) => p.t / 1000);
    const rate = (n: (p: TrafficPoint) => number) => points.map((p) => (p.ms > 0 ? n(p) / (p.ms / 1000) : null));
    return {
      x,
      rates: [rate((p) => p.ok), rate((p) => p.client_errors), rate((p) => p.server_errors)],
      errorRatio: [points.map((p) => (p.requests ? (p.client_errors + p.server_errors) / p.requests : null))],
      latency: [points.map((p) => p.latency_ms?.p50 ?? null), points.map((p) => p.latency_ms?.p95 ?? null), points.map((p) => p.ttfb_ms?.p50 ?? null), points.map((p) => p.ttfb_ms?.p95 ?? null)],
      tokens: [rate((p) => p.input_tokens), rate((p) => p.output_tokens)],
      ttftX: (ttft?.points ?? []).map((p) => p.t / 1000),
      ttft: [(ttft?.points ?? []).map((p) => p.p50), (ttft?.points ?? []).map((p) => p.p95)],
      // The last hour, to the minute (so a chart is not rebuilt on every poll): the live charts' and the 5-minute slots'.
      hour: [Math.floor(Date.now() / 60_000) * 60 - 3600, Math.ceil(Date.now() / 60_000) * 60] as [number, number],
    };
  }, [points, ttft]);
  const per = (v: number) => `${Math.round(v * 100) / 100}/s`;
  return (
    <section>
      <h2>Live <span class="muted small">{scope === "cluster" ? "every worker of this gateway" : "this gateway process"}{pid ? ` (${scope === "cluster" ? "answered by " : ""}pid ${pid})` : ""}, last hour, every 10 s{since ? `, sampling since ${when(since)}` : ""}</span></h2>
      {error ? <p class="error">{error}</p> : null}
      <div class="grid">
        <TimeChart testId="chart-rate" xRange={c.hour} title="Requests per second" x={c.x} ys={c.rates} stacked series={[{ label: "2xx/3xx", color: "#3a9c5b" }, { label: "4xx", color: "#e3872d" }, { label: "5xx", color: "#c9463d" }]} format={per} />
        <TimeChart testId="chart-errors" xRange={c.hour} title="Error ratio (4xx and 5xx)" x={c.x} ys={c.errorRatio} series={[{ label: "errors", color: "#c9463d" }]} format={(v) => pct(v)} />
        <TimeChart testId="chart-latency" xRange={c.hour} title="Latency and time to first byte" x={c.x} ys={c.latency} series={[{ label: "latency p50", color: "#2f6fde" }, { label: "latency p95", color: "#2f6fde", dash: true }, { label: "first byte p50", color: "#8a5cc2" }, { label: "first byte p95", color: "#8a5cc2", dash: true }]} format={ms} />
        <TimeChart testId="chart-ttft" title="Time to first token (streamed attempts, per 5 min)" x={c.ttftX} ys={c.ttft} xRange={c.hour} series={[{ label: "p50", color: "#1f9aa8" }, { label: "p95", color: "#1f9aa8", dash: true }]} format={ms} />
        <TimeChart testId="chart-tokens" xRange={c.hour} title="Tokens per second" x={c.x} ys={c.tokens} stacked series={[{ label: "input", color: "#5c6b7a" }, { label: "output", color: "#e3872d" }]} format={per} />
      </div>
    </section>
  );
}

function UsageCharts() {
  const [range, setRange] = useState<"24h" | "30d">("24h");
  const bucket = range === "24h" ? "hour" : "day";
  const { data, error } = usePoll((signal) => api<Usage>(`/usage${qs({ since: range, bucket })}`, { signal }), 30_000, [range]);
  const c = useMemo(() => {
    if (!data) return undefined;
    const starts = bucketStarts(data.since, data.until, bucket);
    const byStart = new Map(data.rows.map((r) => [Date.parse(r.bucket_start!), r]));
    const pick = (f: (r: Usage["rows"][number]) => number) => starts.map((t) => { const r = byStart.get(t); return r ? f(r) : 0; });
    return {
      x: starts.map((t) => t / 1000),
      requests: [pick((r) => r.requests - r.errors), pick((r) => r.errors)],
      tokens: [pick((r) => r.input_tokens), pick((r) => r.output_tokens)],
      cost: [pick((r) => Number(r.cost_usd))],
    };
  }, [data, bucket]);
  // Days are the ledger's UTC days, and say so; hours are shown in the browser's time.
  const per = bucket === "hour" ? "hour" : "day (UTC)";
  const utc = bucket === "day" ? "day" : undefined;
  return (
    <section>
      <h2>
        Ledger <span class="muted small">every replica's requests, per {per}</span>
        <span class="seg">
          {(["24h", "30d"] as const).map((r) => <button type="button" key={r} class={r === range ? "on" : undefined} onClick={() => setRange(r)} data-range={r}>{r === "24h" ? "24 hours" : "30 days"}</button>)}
        </span>
      </h2>
      {error ? <p class="error">{error}</p> : null}
      {c ? (
        <div class="grid">
          <TimeChart testId="chart-ledger-requests" utc={utc} title={`Requests per ${per}`} x={c.x} ys={c.requests} stacked bars series={[{ label: "ok", color: "#3a9c5b" }, { label: "errors", color: "#c9463d" }]} format={int} />
          <TimeChart testId="chart-ledger-tokens" utc={utc} title={`Tokens per ${per}`} x={c.x} ys={c.tokens} stacked bars series={[{ label: "input", color: "#5c6b7a" }, { label: "output", color: "#e3872d" }]} format={int} />
          <TimeChart testId="chart-ledger-spend" utc={utc} title={`Spend (USD) per ${per}`} x={c.x} ys={c.cost} bars series={[{ label: "spend", color: "#2f6fde" }]} format={(v) => `$${v < 1 ? v.toPrecision(3) : v.toFixed(2)}`} />
        </div>
      ) : <p class="muted">Loading…</p>}
    </section>
  );
}

export function Overview() {
  return (
    <div>
      <Tiles />
      <LiveCharts />
      <UsageCharts />
    </div>
  );
}
