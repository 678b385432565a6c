// Requests: the ledger's newest requests, live (/requests every 5 s while the tab is visible, unless paused), with
// filters; one opens to its record (/requests/{generation_id}): the attempts of its fallback chain with each
// provider's status and latency, tokens, cost, timing, and the ids to grep the logs with.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import { usePoll } from "../poll.ts";
import { Table, type Column } from "../table.tsx";
import { int, ms, usd, when } from "../format.ts";
import type { ConfigLoaded, RequestPage, RequestRecord } from "../types.ts";
import { Copy } from "../copy.tsx";
import { zoneOffset } from "../dates.ts";
import { showInOneColumn } from "../narrow.ts";

const ENDPOINTS = ["chat", "messages", "responses", "embeddings", "rerank", "images", "videos", "count_tokens", "mcp_tool", "responses_mcp_tool"];

interface Filters {
  /** A generation id (gen_…) or a request id (from a log line). */
  id: string;
  project: string;
  key: string;
  model: string;
  endpoint: string;
  status: string;
  streamed: "" | "yes" | "no";
  /** 15m, 1h, 24h, 7d, "" (any time), or "range" (from / to below). */
  since: string;
  from: string;
  to: string;
}

const NONE: Filters = { id: "", project: "", key: "", model: "", endpoint: "", status: "", streamed: "", since: "24h", from: "", to: "" };

/** A datetime-local value (the browser's zone) as ISO 8601. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);
const timeQuery = (f: Filters) => (f.since === "range" ? { since: isoOf(f.from), until: isoOf(f.to) } : { since: f.since });

/** `#/requests?id=gen_…` (a link to one request) opens it. */
const linkedId = () => new URLSearchParams(location.hash.split("?")[1] ?? "").get("id") ?? "";

const idQuery = (id: string) => (!id ? {} : id.startsWith("gen_") ? { generation_id: id } : { request_id: id });

/** Streamed requests are those whose first token was timed (the ledger's ttft_ms). */
const isStreamed = (r: RequestRecord) => r.ttft_ms !== null;

function statusClass(s: number): string {
  return s >= 500 ? "bad" : s >= 400 ? "warn" : "good";
}


function Detail({ id, onClose }: { id: string; onClose: () => void }) {
  const { data: r, error } = usePoll((signal) => api<RequestRecord>(`/requests/${encodeURIComponent(id)}`, { signal }), 60_000, [id]);
  // One column: the record is under the whole list, so the page goes to it (else a tap on a row changes nothing in sight).
  // Once on the tap, where "Loading…" shows, and again when this id's record has come: the short "Loading…" box sits
  // at the document's end, so the first scroll stops there and the record then grows below the fold.
  const box = useRef<HTMLElement>(null);
  const loaded = r?.generation_id === id;
  useEffect(() => showInOneColumn(box.current), [id, loaded]);
  return (
    <aside class="detail" data-testid="request-detail" ref={box}>
      <header>
        <h3>Request</h3>
        <button type="button" class="small" onClick={onClose}>Close</button>
      </header>
      {error ? <p class="error">{error}</p> : null}
      {r ? (
        <>
          <dl class="facts">
            <dt>Generation id</dt><dd><code data-field="generation_id">{r.generation_id}</code> <Copy text={r.generation_id} /></dd>
            <dt>Request id</dt><dd><code data-field="request_id">{r.request_id}</code> <Copy text={r.request_id} /></dd>
            <dt>Link</dt><dd><Copy text={`${location.origin}${location.pathname}#/requests?id=${r.generation_id}`} label="Copy a link to this request" /></dd>
            <dt>In the logs</dt><dd><code>grep {r.request_id}</code> <span class="muted small">(access log: "requestId")</span></dd>
            <dt>When</dt><dd>{when(r.at)}</dd>
            <dt>Project / key</dt><dd>{r.project} / {r.key}{r.sandbox ? " (sandbox)" : ""}</dd>
            <dt>Endpoint</dt><dd>{r.endpoint}{isStreamed(r) ? ", streamed" : ""}</dd>
            <dt>Model</dt><dd>{r.model}</dd>
            <dt>Served by</dt><dd>{r.provider || "—"}</dd>
            <dt>Status</dt><dd><span class={`status ${statusClass(r.status)}`} data-field="status">{r.status}</span> {r.outcome}</dd>
            <dt>Latency</dt><dd data-field="latency">{ms(r.latency_ms)}</dd>
            <dt>First token</dt><dd>{ms(r.ttft_ms)}</dd>
            <dt>Tokens</dt><dd data-field="tokens">{int(r.input_tokens)} in, {int(r.output_tokens)} out{r.cache_read_tokens ? `, ${int(r.cache_read_tokens)} cache read` : ""}{r.reasoning_tokens ? `, ${int(r.reasoning_tokens)} reasoning` : ""}{r.estimated ? " (estimated)" : ""}</dd>
            <dt>Cost</dt><dd data-field="cost">{usd(r.cost_usd)}</dd>
          </dl>
          <h4>Attempts ({r.attempts})</h4>
          {r.attempt_list?.length ? (
            <ol class="attempts" data-testid="attempts">
              {r.attempt_list.map((a, i) => (
                <li key={i} data-attempt={i}>
                  <span class="attempt-target">{a.provider}</span> <span class="muted">{a.model}</span>{" "}
                  <span class={`status ${statusClass(a.status)}`}>{a.status || "no answer"}</span> {ms(a.latency_ms)}
                  {a.error ? <span class="muted"> {a.error}</span> : null}
                  {i < r.attempt_list!.length - 1 ? <span class="muted"> → fell back</span> : null}
                </li>
              ))}
            </ol>
          ) : <p class="muted">{r.attempts ? "The ledger kept no attempt list for this record." : "No provider was asked."}</p>}
        </>
      ) : error ? null : <p class="muted">Loading…</p>}
    </aside>
  );
}

/**
 * A typed filter, applied on Enter or when the field loses focus. What is typed is the field's own state: the list
 * refreshing meanwhile (every 5 s) re-renders the bar, and a field bound to the applied filter would lose it.
 */
function SearchField({ value, apply, placeholder, filter }: { value: string; apply: (v: string) => void; placeholder: string; filter: string }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const commit = (e: Event) => apply((e.target as HTMLInputElement).value);
  return (
    <input type="search" placeholder={placeholder} value={draft} data-filter={filter}
      onInput={(e) => setDraft((e.target as HTMLInputElement).value)} onChange={commit}
      onKeyDown={(e) => { if (e.key === "Enter") commit(e); }} />
  );
}

function FilterBar({ f, set, loaded }: { f: Filters; set: (f: Filters) => void; loaded?: ConfigLoaded }) {
  const on = (k: keyof Filters) => (e: Event) => set({ ...f, [k]: (e.target as HTMLInputElement).value });
  const apply = (k: "id" | "key") => (v: string) => { if (v !== f[k]) set({ ...f, [k]: v }); };
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()} data-testid="filters">
      <SearchField placeholder="generation or request id" value={f.id} apply={apply("id")} filter="id" />
      <select value={f.project} onChange={on("project")} data-filter="project">
        <option value="">every project</option>
        {loaded?.projects.map((p) => <option key={p.id} value={p.id}>{p.id}</option>)}
      </select>
      <SearchField placeholder="key id" value={f.key} apply={apply("key")} filter="key" />
      <select value={f.model} onChange={on("model")} data-filter="model">
        <option value="">every model</option>
        {loaded?.models.map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
      </select>
      <select value={f.endpoint} onChange={on("endpoint")} data-filter="endpoint">
        <option value="">every endpoint</option>
        {ENDPOINTS.map((e) => <option key={e} value={e}>{e}</option>)}
      </select>
      <select value={f.status} onChange={on("status")} data-filter="status">
        <option value="">any status</option>
        <option value="2xx">2xx</option>
        <option value="4xx">4xx</option>
        <option value="5xx">5xx</option>
      </select>
      <select value={f.streamed} onChange={on("streamed")} data-filter="streamed">
        <option value="">streamed or not</option>
        <option value="yes">streamed</option>
        <option value="no">not streamed</option>
      </select>
      <select value={f.since} onChange={on("since")} data-filter="since">
        <option value="15m">last 15 min</option>
        <option value="1h">last hour</option>
        <option value="24h">last 24 hours</option>
        <option value="7d">last 7 days</option>
        <option value="">any time</option>
        <option value="range">from … to …</option>
      </select>
      {f.since === "range" ? (
        <>
          <input type="datetime-local" value={f.from} onChange={on("from")} data-filter="from" aria-label="from" />
          <input type="datetime-local" value={f.to} onChange={on("to")} data-filter="to" aria-label="to" />
          <span class="muted small" data-testid="range-zone">your time ({zoneOffset()})</span>
        </>
      ) : null}
      <button type="button" class="small" onClick={() => set(NONE)}>Clear</button>
    </form>
  );
}

export function Requests() {
  const [f, setF] = useState<Filters>(() => ({ ...NONE, id: linkedId(), since: linkedId() ? "" : NONE.since }));
  const [live, setLive] = useState(true);
  const [older, setOlder] = useState<{ rows: RequestRecord[]; next: string | null } | null>(null);
  const [open, setOpen] = useState<string | null>(() => (linkedId().startsWith("gen_") ? linkedId() : null));
  const { data: loaded } = usePoll((signal) => api<ConfigLoaded>("/config/loaded", { signal }), 60_000, []);
  const query = { ...idQuery(f.id.trim()), project: f.project, key: f.key.trim(), model: f.model, endpoint: f.endpoint, status: f.status, ...timeQuery(f), limit: 100 };
  const { data, error, at } = usePoll((signal) => api<RequestPage>(`/requests${qs(query)}`, { signal }), 5_000, [JSON.stringify(query)], live);
  const setFilters = (n: Filters) => {
    setF(n);
    if (!n.id && linkedId()) history.replaceState(null, "", "#/requests");
    forgetOlder();
    setLive(true);
  };
  /**
   * Live again starts from the newest page alone: the older pages were loaded after the first page as it was then,
   * and appended to a fresh one they would skip whatever arrived between the two.
   */
  const goLive = (on: boolean) => {
    if (on) forgetOlder();
    setLive(on);
  };
  /**
   * One older page at a time: a second click (a double-click, or a slow store) would read the same cursor and append
   * the same page twice. A page asked for before the list started over (live again, new filters) is dropped.
   */
  const olderAsked = useRef<string | null>(null);
  const [olderLoading, setOlderLoading] = useState(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  const loadOlder = async () => {
    const cursor = older ? older.next : data?.next;
    if (!cursor || olderAsked.current) return;
    olderAsked.current = cursor;
    setOlderLoading(true);
    setOlderError(null);
    setLive(false);
    try {
      const page = await api<RequestPage>(`/requests${qs({ ...query, cursor })}`);
      if (olderAsked.current === cursor) setOlder((o) => ({ rows: [...(o?.rows ?? []), ...page.requests], next: page.next }));
    } catch (err) {
      // "live" is off now, so no poll would show it: the error goes beside the button.
      if (olderAsked.current === cursor) setOlderError((err as Error).message);
    } finally {
      if (olderAsked.current === cursor) {
        olderAsked.current = null;
        setOlderLoading(false);
      }
    }
  };
  /** Back to the newest page alone: older pages, one on its way and its error are forgotten. */
  const forgetOlder = () => {
    setOlder(null);
    olderAsked.current = null;
    setOlderLoading(false);
    setOlderError(null);
  };
  /** Closed, the record leaves the page; in one column the page goes back to its row, where the operator was. */
  const closeDetail = () => {
    const id = open;
    setOpen(null);
    if (id) showInOneColumn(document.querySelector(`[data-testid="requests-table"] tr[data-row="${CSS.escape(id)}"]`), "center");
  };
  const all = [...(data?.requests ?? []), ...(older?.rows ?? [])];
  const rows = all.filter((r) => (f.streamed === "" ? true : isStreamed(r) === (f.streamed === "yes")));
  const next = older ? older.next : data?.next;
  const columns: Column<RequestRecord>[] = [
    { key: "at", label: "Time", render: (r) => <span title={r.at}>{when(r.at)}</span> },
    { key: "project", label: "Project" },
    { key: "key", label: "Key" },
    { key: "endpoint", label: "Endpoint", render: (r) => `${r.endpoint}${isStreamed(r) ? " ⇶" : ""}` },
    { key: "model", label: "Model" },
    { key: "provider", label: "Served by", render: (r) => r.provider || "—" },
    { key: "status", label: "Status", num: true, render: (r) => <span class={`status ${statusClass(r.status)}`}>{r.status}</span> },
    { key: "attempts", label: "Attempts", num: true, render: (r) => <span class={r.attempts > 1 ? "warn" : undefined}>{r.attempts}</span> },
    { key: "tokens", label: "Tokens in / out", num: true, sort: (r) => r.input_tokens + r.output_tokens, render: (r) => `${int(r.input_tokens)} / ${int(r.output_tokens)}` },
    { key: "cost_usd", label: "Cost", num: true, sort: (r) => Number(r.cost_usd), render: (r) => usd(r.cost_usd) },
    { key: "latency_ms", label: "Latency", num: true, render: (r) => ms(r.latency_ms) },
  ];
  return (
    <div class={open ? "with-detail" : undefined}>
      <section>
        <h2>
          Requests
          <span class="controls">
            <label class="check"><input type="checkbox" checked={live} onChange={(e) => goLive((e.target as HTMLInputElement).checked)} data-testid="live" /> live</label>
            <span class="muted small">{at ? `updated ${when(at)}` : ""}</span>
          </span>
        </h2>
        <FilterBar f={f} set={setFilters} loaded={loaded} />
        {error ? <p class="error">{error}</p> : null}
        {/* A policy's refusal is no ledger record (a flood of them must not become store writes): no status filter finds them. */}
        <p class="muted small" data-testid="refusals-note">Requests refused by a budget (402), the model allowlist (403) or a rate limit (429) never reached a provider and are not in this log: the overview's live traffic counts them among the 4xx, and <code>/metrics</code> by code (<code>gateway_requests_total{"{"}code="402"{"}"}</code>).</p>
        {f.streamed ? <p class="muted small">Streamed or not is told by the first token's time, within the pages loaded.</p> : null}
        <Table testId="requests-table" columns={columns} rows={rows} rowKey={(r) => r.generation_id} onRowClick={(r) => setOpen(r.generation_id)} selected={open ?? undefined} initialSort={{ key: "at", desc: true }} empty={data ? "No request matches" : "Loading…"} />
        {next ? <button type="button" class="small" onClick={() => void loadOlder()} disabled={olderLoading} data-testid="older">{olderLoading ? "Loading older requests…" : "Older requests"}</button> : null}
        {olderError ? <p class="error" data-testid="older-error">Older requests: {olderError}</p> : null}
      </section>
      {open ? <Detail id={open} onClose={closeDetail} /> : null}
    </div>
  );
}
