// Keys: every key, gateway.yaml's and the admin API's (/keys), and, with a write-scope admin key, create one (shown
// once, with a copy button), revoke or rotate an API key. gateway.yaml's keys are changed in the file (the API says
// so); a read-scope key sees the same page with every change switched off.
import { useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { usePoll } from "../poll.ts";
import { session } from "../session.ts";
import { Table, type Column } from "../table.tsx";
import { ago, usd, when } from "../format.ts";
import { Copy } from "../copy.tsx";
import { expiryMeaning, expiryOf } from "../dates.ts";
import { lineageOf, rotatedAlready } from "../key-lineage.ts";
import type { ConfigLoaded, KeyView } from "../types.ts";

interface Created {
  key: string;
  project: string;
  id: string;
  what: string;
}

function ShownOnce({ c, onDone }: { c: Created; onDone: () => void }) {
  return (
    <div class="modal" role="dialog" aria-modal="true" data-testid="new-key">
      <div class="modal-body">
        <h3>{c.what}: {c.project} / {c.id}</h3>
        <p>Copy the key now: it is shown this once, and the gateway keeps only its hash.</p>
        <p class="secret"><input type="text" readOnly value={c.key} data-testid="new-key-value" onFocus={(e) => (e.target as HTMLInputElement).select()} /> <Copy text={c.key} testId="copy-key" /></p>
        <button type="button" onClick={onDone} data-testid="new-key-done">Done</button>
      </div>
    </div>
  );
}

function CreateForm({ projects, canWrite, onCreated }: { projects: string[]; canWrite: boolean; onCreated: (c: Created) => void }) {
  const [f, setF] = useState({ project: "", id: "", name: "", expires: "", rpm: "", tpm: "", budget: "", period: "month", sandbox: false });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof f) => (e: Event) => {
    const t = e.target as HTMLInputElement;
    setF({ ...f, [k]: t.type === "checkbox" ? t.checked : t.value });
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const project = f.project || projects[0];
    if (!project) return setError("No project is declared in gateway.yaml");
    const limits = { ...(f.rpm ? { rpm: Number(f.rpm) } : {}), ...(f.tpm ? { tpm: Number(f.tpm) } : {}) };
    const body = {
      project,
      ...(f.id.trim() ? { id: f.id.trim() } : {}),
      ...(f.name.trim() ? { name: f.name.trim() } : {}),
      ...(f.sandbox ? { sandbox: true } : {}),
      ...(f.expires ? { expires_at: expiryOf(f.expires) } : {}),
      ...(Object.keys(limits).length ? { rate_limits: limits } : {}),
      ...(f.budget.trim() ? { budget: { usd: f.budget.trim(), period: f.period } } : {}),
    };
    setBusy(true);
    try {
      const k = await api<KeyView & { key: string }>("/keys", { method: "POST", body });
      onCreated({ key: k.key, project: k.project, id: k.id, what: "New key" });
      setF({ ...f, id: "", name: "" });
    } catch (err) {
      setError(err instanceof ApiError ? `${err.message}${err.field ? ` (${err.field})` : ""}` : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="create" onSubmit={submit} data-testid="create-key">
      <fieldset disabled={!canWrite || busy}>
        <legend>New key</legend>
        {!canWrite ? <p class="muted" data-testid="read-only">This admin key has the read scope: it cannot create, revoke or rotate keys.</p> : null}
        <label>Project <select value={f.project || projects[0]} onChange={set("project")} data-field="project">{projects.map((p) => <option key={p} value={p}>{p}</option>)}</select></label>
        <label>Id <input value={f.id} onInput={set("id")} placeholder="generated" pattern="[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}" maxLength={64} data-field="id" /></label>
        <label>Name <input value={f.name} onInput={set("name")} placeholder="optional" data-field="name" /></label>
        <label>Expires (a UTC day) <input type="date" value={f.expires} onInput={set("expires")} data-field="expires" /></label>
        {f.expires ? <span class="muted small" data-testid="expires-meaning">{expiryMeaning(f.expires)}</span> : null}
        <label>Requests/min <input type="number" min="1" value={f.rpm} onInput={set("rpm")} data-field="rpm" /></label>
        <label>Tokens/min <input type="number" min="1" value={f.tpm} onInput={set("tpm")} data-field="tpm" /></label>
        <label>Budget USD <input value={f.budget} onInput={set("budget")} placeholder="none" inputMode="decimal" data-field="budget" /></label>
        <label>per <select value={f.period} onChange={set("period")}><option value="day">day</option><option value="week">week</option><option value="month">month</option><option value="total">total</option></select></label>
        <label class="check"><input type="checkbox" checked={f.sandbox} onChange={set("sandbox")} /> sandbox (mg_test_)</label>
        <button type="submit" data-testid="create-submit">{busy ? "Creating…" : "Create key"}</button>
      </fieldset>
      {error ? <p class="error" role="alert" data-testid="create-error">{error}</p> : null}
    </form>
  );
}

/** Revoke and rotate, each confirmed by a second click. */
function Actions({ k, canWrite, onChanged, onCreated }: { k: KeyView; canWrite: boolean; onChanged: () => void; onCreated: (c: Created) => void }) {
  const [confirm, setConfirm] = useState<"revoke" | "rotate" | null>(null);
  const [error, setError] = useState<string>();
  if (k.status !== "active") return <span class="muted">—</span>;
  const yaml = k.source === "yaml";
  const why = yaml ? "Declared in gateway.yaml: change it there (model-gateway keys revoke|rotate --config gateway.yaml)" : !canWrite ? "Needs a write-scope admin key" : undefined;
  // Revoking a rotated key early is fine; rotating it again is the API's 409, so the button says why before.
  const rotateWhy = why ?? rotatedAlready(k);
  const path = `/keys/${encodeURIComponent(k.project)}/${encodeURIComponent(k.id)}`;
  const run = async (what: "revoke" | "rotate") => {
    setConfirm(null);
    setError(undefined);
    try {
      if (what === "revoke") await api(`${path}/revoke`, { method: "POST", body: { reason: "revoked in the console" } });
      else {
        const n = await api<KeyView & { key: string }>(`${path}/rotate`, { method: "POST", body: { overlap_seconds: 3600 } });
        onCreated({ key: n.key, project: n.project, id: n.id, what: `Rotated ${k.id} (the old key works for one more hour)` });
      }
      onChanged();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <span class="actions" title={why}>
      {confirm ? (
        <>
          <button type="button" class="small danger" onClick={() => void run(confirm)} data-action={`confirm-${confirm}`}>Confirm {confirm}</button>
          <button type="button" class="small" onClick={() => setConfirm(null)}>Cancel</button>
        </>
      ) : (
        <>
          <button type="button" class="small" disabled={!!rotateWhy} title={rotateWhy} onClick={() => setConfirm("rotate")} data-action="rotate">Rotate</button>
          <button type="button" class="small danger" disabled={!!why} onClick={() => setConfirm("revoke")} data-action="revoke">Revoke</button>
        </>
      )}
      {error ? <span class="error small">{error}</span> : null}
    </span>
  );
}

export function Keys() {
  const canWrite = session()?.scope === "write";
  const [status, setStatus] = useState("active");
  const [created, setCreated] = useState<Created | null>(null);
  const { data, error, refresh } = usePoll((signal) => api<{ keys: KeyView[]; from_cache: boolean }>(`/keys?status=${status}`, { signal }), 15_000, [status]);
  const { data: loaded } = usePoll((signal) => api<ConfigLoaded>("/config/loaded", { signal }), 60_000, []);
  const limits = (k: KeyView) => [k.rate_limits?.rpm ? `${k.rate_limits.rpm} rpm` : "", k.rate_limits?.tpm ? `${k.rate_limits.tpm} tpm` : ""].filter(Boolean).join(", ") || "project's";
  const columns: Column<KeyView>[] = [
    { key: "project", label: "Project" },
    { key: "id", label: "Id" },
    { key: "name", label: "Name", render: (k) => k.name ?? "—" },
    { key: "source", label: "Source", render: (k) => (k.source === "yaml" ? "gateway.yaml" : "API") },
    { key: "status", label: "Status", render: (k) => <><span class={`key-status ${k.status}`}>{k.status}</span>{lineageOf(k) ? <span class="muted small" data-field="lineage"> {lineageOf(k)}</span> : null}</> },
    { key: "hint", label: "Ends with", render: (k) => (k.hint ? `…${k.hint}` : "—") },
    { key: "created_at", label: "Created", render: (k) => (k.created_at ? <span title={k.created_at}>{when(k.created_at)}{k.created_by ? ` by ${k.created_by}` : ""}</span> : "—") },
    { key: "expires_at", label: "Expires", render: (k) => (k.expires_at ? <span title={k.expires_at}>{ago(k.expires_at)}</span> : "never") },
    { key: "last_used_at", label: "Last used", render: (k) => <span title={k.last_used_at ?? ""}>{ago(k.last_used_at)}</span> },
    { key: "limits", label: "Limits", sort: (k) => limits(k), render: limits },
    { key: "budget", label: "Budget", sort: (k) => (k.budget ? Number(k.budget.usd) : null), csv: (k) => (k.budget ? `${k.budget.usd} / ${k.budget.period}` : null), render: (k) => (k.budget ? `${usd(k.budget.usd)} / ${k.budget.period}` : "—") },
    { key: "actions", label: "", sort: () => null, csv: false, render: (k) => <Actions k={k} canWrite={canWrite} onChanged={refresh} onCreated={setCreated} /> },
  ];
  return (
    <div>
      <section>
        <h2>Keys</h2>
        <CreateForm projects={(loaded?.projects ?? []).map((p) => p.id)} canWrite={canWrite} onCreated={(c) => { setCreated(c); refresh(); }} />
      </section>
      <section>
        <h2>
          Every key
          <span class="controls">
            <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)} data-testid="key-status">
              <option value="active">active</option>
              <option value="revoked">revoked</option>
              <option value="expired">expired</option>
              <option value="any">any status</option>
            </select>
            {data?.from_cache ? <span class="warn small">the store is down: this replica's cache</span> : null}
          </span>
        </h2>
        {error ? <p class="error">{error}</p> : null}
        <Table testId="keys-table" columns={columns} rows={data?.keys ?? []} rowKey={(k) => `${k.project}/${k.id}`} initialSort={{ key: "project", desc: false }} csvName="keys.csv" empty={data ? "No keys" : "Loading…"} />
      </section>
      {created ? <ShownOnce c={created} onDone={() => setCreated(null)} /> : null}
    </div>
  );
}
