// Spend: the ledger's cost by project, model, key or provider over a chosen range (/usage), stacked per hour or
// day and summed in a sortable table that exports as CSV; and each budget's period as used / reserved / left
// (/budgets).
import { useMemo, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import { usePoll } from "../poll.ts";
import { PALETTE, TimeChart } from "../chart.tsx";
import { Table, type Column } from "../table.tsx";
import { int, usd, when } from "../format.ts";
import type { BudgetState, Budgets, Usage, UsageRow } from "../types.ts";
import { bucketStarts } from "../buckets.ts";
import { whenUtc } from "../dates.ts";

const GROUPS = {
  project: { label: "Project", by: "project" },
  model: { label: "Model", by: "model" },
  key: { label: "Key", by: "project,key" },
  provider: { label: "Provider", by: "provider" },
} as const;
type Group = keyof typeof GROUPS;

/** Series drawn in the chart; the rest are summed as "other". */
const TOP = 8;

const nameOf = (g: Group, r: UsageRow) => (g === "key" ? `${r.group.project} / ${r.group.key}` : r.group[g] ?? "");

interface Range {
  since: string;
  until?: string;
}

function RangePicker({ value, onChange }: { value: Range; onChange: (r: Range) => void }) {
  const preset = ["24h", "7d", "30d"].includes(value.since) && !value.until ? value.since : "custom";
  const day = (iso?: string) => (iso && /^\d{4}-\d{2}-\d{2}/.test(iso) ? iso.slice(0, 10) : "");
  return (
    <span class="range">
      <select value={preset} onChange={(e) => {
        const v = (e.target as HTMLSelectElement).value;
        const today = new Date().toISOString().slice(0, 10);
        onChange(v === "custom" ? { since: new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10), until: today } : { since: v });
      }} data-testid="range">
        <option value="24h">Last 24 hours</option>
        <option value="7d">Last 7 days</option>
        <option value="30d">Last 30 days</option>
        <option value="custom">From … to …</option>
      </select>
      {preset === "custom" ? (
        <>
          <input type="date" value={day(value.since)} onChange={(e) => onChange({ ...value, since: (e.target as HTMLInputElement).value })} data-testid="from" />
          <span>to</span>
          <input type="date" value={day(value.until)} onChange={(e) => onChange({ ...value, until: (e.target as HTMLInputElement).value })} data-testid="to" />
          <span class="muted small" data-testid="range-zone">UTC days</span>
        </>
      ) : null}
    </span>
  );
}

/** The "to" day is included: the range ends at the start of the next day. */
const untilOf = (r: Range) => (r.until ? new Date(Date.parse(r.until) + 86_400_000).toISOString().slice(0, 10) : undefined);
const spanMs = (r: Range) => {
  const rel = /^(\d+)([hd])$/.exec(r.since);
  if (rel) return Number(rel[1]) * (rel[2] === "h" ? 3_600_000 : 86_400_000);
  return (r.until ? Date.parse(r.until) + 86_400_000 : Date.now()) - Date.parse(r.since);
};

function SpendChart({ bucketed, totals, group, bucket, utc }: { bucketed: Usage; totals: UsageRow[]; group: Group; bucket: "hour" | "day"; utc: boolean }) {
  const c = useMemo(() => {
    const ranked = [...totals].sort((a, b) => Number(b.cost_usd) - Number(a.cost_usd)).map((r) => nameOf(group, r));
    const shown = ranked.slice(0, TOP);
    const other = ranked.length > TOP;
    const starts = bucketStarts(bucketed.since, bucketed.until, bucket);
    const index = new Map(starts.map((t, i) => [t, i]));
    const ys = [...shown, ...(other ? ["other"] : [])].map(() => starts.map(() => 0));
    for (const r of bucketed.rows) {
      const i = index.get(Date.parse(r.bucket_start!));
      if (i === undefined) continue;
      const s = shown.indexOf(nameOf(group, r));
      ys[s === -1 ? shown.length : s]![i]! += Number(r.cost_usd);
    }
    return { x: starts.map((t) => t / 1000), ys, series: [...shown, ...(other ? ["other"] : [])].map((label, i) => ({ label, color: label === "other" ? "#9aa5b1" : PALETTE[i % PALETTE.length] })) };
  }, [bucketed, totals, group, bucket]);
  return <TimeChart testId="chart-spend" utc={utc ? bucket : undefined} title={`Spend per ${bucket}${utc ? " (UTC)" : ""} by ${GROUPS[group].label.toLowerCase()} (USD)`} x={c.x} ys={c.ys} series={c.series} stacked bars height={240} format={(v) => `$${v < 1 ? v.toPrecision(3) : v.toFixed(2)}`} />;
}

function BudgetBar({ b }: { b: BudgetState }) {
  const limit = Number(b.limit_usd) || 1;
  const w = (v: string) => `${Math.min(100, (Number(v) / limit) * 100)}%`;
  return (
    <div class="budget-bar" title={`used ${usd(b.spent_usd)}, reserved ${usd(b.reserved_usd)}, left ${usd(b.remaining_usd)} of ${usd(b.limit_usd)}`}>
      <span class="used" style={{ width: w(b.spent_usd) }} />
      <span class="reserved" style={{ width: w(b.reserved_usd) }} />
    </div>
  );
}

function BudgetTable() {
  const { data, error } = usePoll((signal) => api<Budgets>("/budgets", { signal }), 15_000, []);
  const rows = [
    ...(data?.projects ?? []).filter((p) => p.budget).map((p) => ({ id: p.project, scope: "project", b: p.budget! })),
    ...(data?.keys ?? []).map((k) => ({ id: `${k.project} / ${k.key}`, scope: `key (${k.source})`, b: k.budget })),
  ];
  const columns: Column<(typeof rows)[number]>[] = [
    { key: "id", label: "Budget of" },
    { key: "scope", label: "Scope" },
    { key: "period", label: "Period", sort: (r) => r.b.period, render: (r) => <span title={`from ${whenUtc(r.b.period_start)}${r.b.resets_at ? `, resets ${whenUtc(r.b.resets_at)}` : ""}`}>{r.b.period}</span> },
    { key: "limit", label: "Limit", num: true, sort: (r) => Number(r.b.limit_usd), csv: (r) => r.b.limit_usd, render: (r) => usd(r.b.limit_usd) },
    { key: "used", label: "Used", num: true, sort: (r) => Number(r.b.spent_usd), csv: (r) => r.b.spent_usd, render: (r) => usd(r.b.spent_usd) },
    { key: "reserved", label: "Reserved", num: true, sort: (r) => Number(r.b.reserved_usd), csv: (r) => r.b.reserved_usd, render: (r) => usd(r.b.reserved_usd) },
    { key: "left", label: "Left", num: true, sort: (r) => Number(r.b.remaining_usd), csv: (r) => r.b.remaining_usd, render: (r) => <span class={r.b.exhausted ? "bad" : undefined}>{usd(r.b.remaining_usd)}</span> },
    { key: "bar", label: "Used / reserved / left", sort: (r) => Number(r.b.spent_usd) / (Number(r.b.limit_usd) || 1), csv: false, render: (r) => <BudgetBar b={r.b} /> },
  ];
  return (
    <section>
      <h2>Budgets <span class="muted small">this period (UTC days, weeks from Monday, months), as the budget plugin counts it</span></h2>
      {error ? <p class="error">{error}</p> : null}
      <Table testId="budgets" columns={columns} rows={rows} rowKey={(r) => `${r.scope}:${r.id}`} initialSort={{ key: "bar", desc: true }} csvName="budgets.csv" empty={data ? "No project or key has a budget" : "Loading…"} />
    </section>
  );
}

export function Spend() {
  const [range, setRange] = useState<Range>({ since: "7d" });
  const [group, setGroup] = useState<Group>("project");
  const [sandbox, setSandbox] = useState(false);
  const bucket = spanMs(range) <= 2 * 86_400_000 ? "hour" : "day";
  // Days (and dates picked) are UTC days, as the CLI's and the API's: the range, its chart and its dates in UTC. A
  // span back from now in hours is shown in the browser's time.
  const utc = bucket === "day" || range.until !== undefined;
  const at = utc ? whenUtc : (t: string) => when(t).slice(0, 16);
  const common = { since: range.since, until: untilOf(range), group_by: GROUPS[group].by, include_sandbox: sandbox || undefined };
  const { data, error } = usePoll(
    (signal) => Promise.all([api<Usage>(`/usage${qs({ ...common, bucket })}`, { signal }), api<Usage>(`/usage${qs(common)}`, { signal })]),
    30_000, [range.since, range.until, group, sandbox],
  );
  const [bucketed, totals] = data ?? [];
  const columns: Column<UsageRow>[] = [
    { key: "name", label: GROUPS[group].label, sort: (r) => nameOf(group, r) },
    { key: "requests", label: "Requests", num: true, render: (r) => int(r.requests) },
    { key: "errors", label: "Errors", num: true, render: (r) => int(r.errors) },
    { key: "input_tokens", label: "Input tokens", num: true, render: (r) => int(r.input_tokens) },
    { key: "output_tokens", label: "Output tokens", num: true, render: (r) => int(r.output_tokens) },
    { key: "cache_read_tokens", label: "Cache read", num: true, render: (r) => int(r.cache_read_tokens) },
    { key: "cost_usd", label: "Cost", num: true, sort: (r) => Number(r.cost_usd), csv: (r) => r.cost_usd, render: (r) => usd(r.cost_usd) },
  ];
  return (
    <div>
      <section>
        <h2>
          Spend
          <span class="controls">
            <RangePicker value={range} onChange={setRange} />
            <span class="seg">
              {(Object.keys(GROUPS) as Group[]).map((g) => <button type="button" key={g} class={g === group ? "on" : undefined} onClick={() => setGroup(g)} data-group={g}>{GROUPS[g].label}</button>)}
            </span>
            <label class="check"><input type="checkbox" checked={sandbox} onChange={(e) => setSandbox((e.target as HTMLInputElement).checked)} /> sandbox too</label>
          </span>
        </h2>
        {error ? <p class="error">{error}</p> : null}
        {totals ? <p class="muted" data-testid="spend-range">{at(totals.since)} to {at(totals.until)}: <strong data-testid="spend-total">{usd(totals.total.cost_usd)}</strong> over <span data-testid="spend-requests">{int(totals.total.requests)}</span> requests</p> : null}
        {bucketed && totals ? <SpendChart bucketed={bucketed} totals={totals.rows} group={group} bucket={bucket} utc={utc} /> : <p class="muted">Loading…</p>}
        <Table
          testId="spend-table"
          columns={columns}
          rows={totals?.rows ?? []}
          rowKey={(r) => nameOf(group, r)}
          initialSort={{ key: "cost_usd", desc: true }}
          csvName={`spend-by-${group}.csv`}
          empty={totals ? "No requests in this range" : "Loading…"}
          foot={totals ? <tr><td>Total</td><td class="num">{int(totals.total.requests)}</td><td colSpan={4} /><td class="num">{usd(totals.total.cost_usd)}</td></tr> : undefined}
        />
      </section>
      <BudgetTable />
    </div>
  );
}
