// The operator console (docs/console.md): sign in with an admin key, then six views over the admin API. Views are
// addressed by the URL's fragment (#/spend), so switching never reloads the page (the key lives in its memory).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./style.css";
import { signOut, useSession } from "./session.ts";
import { SignIn } from "./views/sign-in.tsx";
import { Overview } from "./views/overview.tsx";
import { Spend } from "./views/spend.tsx";
import { Requests } from "./views/requests.tsx";
import { Providers } from "./views/providers.tsx";
import { Keys } from "./views/keys.tsx";
import { Config } from "./views/config.tsx";

const VIEWS = [
  { id: "overview", label: "Overview", view: Overview },
  { id: "spend", label: "Spend", view: Spend },
  { id: "requests", label: "Requests", view: Requests },
  { id: "providers", label: "Providers", view: Providers },
  { id: "keys", label: "Keys", view: Keys },
  { id: "config", label: "Config", view: Config },
] as const;

const current = () => location.hash.replace(/^#\/?/, "").split("?")[0] || "overview";

function App() {
  const { session, reason } = useSession();
  const [route, setRoute] = useState(current());
  useEffect(() => {
    const on = () => setRoute(current());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  if (!session) return <SignIn reason={reason} />;
  const active = VIEWS.find((v) => v.id === route) ?? VIEWS[0];
  const View = active.view;
  return (
    <div class="app">
      <header class="top">
        <span class="brand">model-gateway</span>
        <nav>
          {VIEWS.map((v) => <a key={v.id} href={`#/${v.id}`} class={v.id === active.id ? "active" : undefined} data-nav={v.id}>{v.label}</a>)}
        </nav>
        <span class="who" data-testid="who">
          {session.id} <span class={`badge ${session.scope}`}>{session.scope === "write" ? "read & write" : "read only"}</span>
        </span>
        <button type="button" class="small" onClick={() => signOut()} data-testid="sign-out">Sign out</button>
      </header>
      <main data-view={active.id}>
        <View />
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
