// Sign-in: an admin key (mg_admin_…), checked by the gateway (/admin/v1/whoami) before anything else is asked.
import { useState } from "preact/hooks";
import { whoami, ApiError } from "../api.ts";
import { signIn } from "../session.ts";

export function SignIn({ reason }: { reason?: string }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | undefined>(reason);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return setError("Paste an admin key (mg_admin_…)");
    setBusy(true);
    try {
      signIn(await whoami(k));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="sign-in">
      <form onSubmit={submit} data-testid="sign-in">
        <h1>model-gateway console</h1>
        <p class="muted">Sign in with an admin key from <code>admin_keys</code> in gateway.yaml (<code>model-gateway keys new --admin</code>). A read-scope key sees everything and changes nothing.</p>
        {/* A username field, hidden, so password managers can keep the key. */}
        <input type="text" name="username" autocomplete="username" value="admin" hidden readOnly />
        <label>
          Admin key
          <input type="password" name="key" autocomplete="current-password" placeholder="mg_admin_…" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} autoFocus data-testid="key" />
        </label>
        {error ? <p class="error" role="alert" data-testid="sign-in-error">{error}</p> : null}
        <button type="submit" disabled={busy} data-testid="sign-in-submit">{busy ? "Checking…" : "Sign in"}</button>
        <p class="muted small">The key stays in this tab's memory only: a reload or a new tab asks for it again.</p>
      </form>
    </div>
  );
}
