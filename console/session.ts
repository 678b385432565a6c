// Who is signed in: the admin key and what /admin/v1/whoami said about it. Held in this page's memory only (not in
// sessionStorage, localStorage or a cookie): another page of this origin (a served asset, say) can never read it,
// and it is gone when the tab is closed or reloaded; a password manager can fill the sign-in form again.
import { useEffect, useState } from "preact/hooks";

export interface Session {
  key: string;
  id: string;
  scope: "read" | "write";
  expiresAt: string | null;
}

let current: Session | null = null;
let lastReason: string | undefined;
const listeners = new Set<() => void>();

export const session = (): Session | null => current;

export function signIn(s: Session): void {
  current = s;
  lastReason = undefined;
  for (const l of listeners) l();
}

/** `reason`: why (the key was refused), shown on the sign-in page. */
export function signOut(reason?: string): void {
  current = null;
  lastReason = reason;
  for (const l of listeners) l();
}

export function useSession(): { session: Session | null; reason?: string } {
  const [, bump] = useState(0);
  useEffect(() => {
    const l = () => bump((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return { session: current, reason: lastReason };
}
