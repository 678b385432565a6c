// Config: the file in force and whether the last reload was refused, and why (/config), when it was loaded or last
// reloaded and what that changed, and what it holds: the pipeline's plugins, providers, models, projects, admin
// keys (/config/loaded); the store and the key cache.
import { api } from "../api.ts";
import { usePoll } from "../poll.ts";
import { usd, when } from "../format.ts";
import type { ConfigLoaded, ConfigState } from "../types.ts";
import { adminKeyNote, yamlKeys } from "../config-facts.ts";

export function Config() {
  const { data: state, error: e1 } = usePoll((signal) => api<ConfigState>("/config", { signal }), 10_000, []);
  const { data: c, error: e2 } = usePoll((signal) => api<ConfigLoaded>("/config/loaded", { signal }), 10_000, []);
  const last = c?.last_reload;
  // Settings the file in force changes that the running process reads only at start (the port, the store, the log…):
  // "in force" alone would tell the operator a new port is listening when the old one still is.
  const pending = state?.config.restart_pending ?? [];
  return (
    <div>
      <section>
        <h2>Config</h2>
        {e1 || e2 ? <p class="error">{e1 ?? e2}</p> : null}
        {state && c ? (
          <dl class="facts" data-testid="config-state">
            <dt>File</dt><dd><code>{state.config.file}</code></dd>
            <dt>Status</dt>
            <dd data-field="status">
              {state.config.status !== "ok" ? <span class="bad">the last reload was refused: the previous config still serves</span>
                : pending.length ? <span class="warn">in force, but for the settings below that wait for a restart</span>
                : <span class="good">in force</span>}
            </dd>
            {pending.length ? (
              <>
                <dt>Waits for a restart</dt>
                <dd data-field="restart-pending">
                  <span class="warn">{pending.map((name, i) => <span key={name}>{i ? ", " : ""}<code>{name}</code></span>)}</span>{" "}
                  <span class="muted small">read only when the gateway starts: it still runs with the value it started with</span>
                </dd>
              </>
            ) : null}
            <dt>Loaded</dt><dd>{`at start, ${when(c.started_at)}`}</dd>
            <dt>Last reload</dt>
            <dd data-field="last-reload">
              {last ? <>{when(last.at)} ({last.trigger}): {last.ok ? <span class="good">applied</span> : <span class="bad">refused</span>}</> : "none since the start"}
            </dd>
            <dt>Store</dt><dd>{state.store.kind}, {state.store.up ? <span class="good">up</span> : <span class="bad">down{state.store.reason ? ` (${state.store.reason})` : ""}</span>}</dd>
            <dt>Key cache</dt><dd>{state.key_cache.keys} API keys, synced {when(state.key_cache.synced_at)}</dd>
          </dl>
        ) : <p class="muted">Loading…</p>}
        {state?.config.problems?.length ? (
          <div class="problems" data-testid="reload-problems">
            <h3>Why the last reload was refused</h3>
            <ul>{state.config.problems.map((p, i) => <li key={i}><code>{p}</code></li>)}</ul>
          </div>
        ) : null}
        {last?.ok && last.changes ? (
          <details>
            <summary>What the last reload changed</summary>
            <pre>{JSON.stringify(last.changes, null, 2)}</pre>
          </details>
        ) : null}
      </section>
      {c ? (
        <div class="grid">
          <section>
            <h3>Pipeline</h3>
            <ol data-testid="pipeline">{c.pipeline.map((p) => <li key={p.name}>{p.name}{p.source === "plugin" ? <span class="muted"> (plugin {p.module})</span> : null}</li>)}</ol>
          </section>
          <section>
            <h3>Providers ({c.providers.length})</h3>
            <ul data-testid="config-providers">{c.providers.map((p) => <li key={p.name}>{p.name} <span class="muted">{p.protocol}</span>{p.enabled ? null : <span class="muted"> off: {p.disabled_reason}</span>}</li>)}</ul>
          </section>
          <section>
            <h3>Projects ({c.projects.length})</h3>
            <ul data-testid="config-projects">
              {c.projects.map((p) => (
                <li key={p.id}>
                  {p.id} <span class="muted">{yamlKeys(p.keys)}{p.budget ? `, budget ${usd(p.budget.usd)} / ${p.budget.period ?? "month"}` : ""}{p.rate_limits?.rpm ? `, ${p.rate_limits.rpm} rpm` : ""}{p.allow_models ? `, models ${p.allow_models.join(" ")}` : ""}</span>
                </li>
              ))}
            </ul>
          </section>
          <section>
            <h3>Admin keys ({c.admin_keys.length})</h3>
            <ul data-testid="config-admin-keys">{c.admin_keys.map((k) => <li key={k.id} data-row={k.id}>{k.id} <span class="muted">{adminKeyNote(k)}</span></li>)}</ul>
            {c.mcp_servers.length ? <><h3>MCP servers</h3><ul>{c.mcp_servers.map((m) => <li key={m}>{m}</li>)}</ul></> : null}
          </section>
          <section class="wide">
            <h3>Models ({c.models.length})</h3>
            <p class="models" data-testid="config-models">{c.models.map((m) => <span key={m.id} class="chip" title={`${m.type}: ${m.endpoints.join(", ")}${(m.retiring ?? []).map((r) => `; ${r.provider} ${r.retired ? "retired" : "retires"} ${r.retires}`).join("")}`}>{m.id}</span>)}</p>
          </section>
        </div>
      ) : null}
    </div>
  );
}
