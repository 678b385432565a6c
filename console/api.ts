// Every figure the console shows comes from the admin API, /admin/v1 on this origin, with the signed-in admin key
// as a bearer header. A 401 (the key was revoked, expired or removed from gateway.yaml) signs out at once.
import { session, signOut, type Session } from "./session.ts";

export const ADMIN = "/admin/v1";
/** No answer within this is an error shown on the page (the next poll tries again). */
const TIMEOUT_MS = 15_000;

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string | undefined, message: string, readonly field?: string) {
    super(message);
  }
}

function withTimeout(signal?: AbortSignal): AbortSignal {
  const t = AbortSignal.timeout(TIMEOUT_MS);
  return signal ? AbortSignal.any([signal, t]) : t;
}

async function call<T>(key: string, path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(ADMIN + path, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${key}`, ...(init.body !== undefined ? { "content-type": "application/json" } : {}) },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: withTimeout(init.signal),
      cache: "no-store",
      credentials: "omit",
    });
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw new ApiError(0, undefined, (err as Error).name === "TimeoutError" ? "The gateway did not answer in time" : "The gateway cannot be reached");
  }
  let json: any;
  try {
    json = await res.json();
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const e = json?.error;
    throw new ApiError(res.status, e?.code, e?.message ?? `HTTP ${res.status}`, e?.details?.field);
  }
  return json as T;
}

/** A call with the signed-in key; a 401 signs out with the gateway's reason. */
export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const s = session();
  if (!s) throw new ApiError(401, "INVALID_API_KEY", "Not signed in");
  try {
    return await call<T>(s.key, path, init);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && session() === s) signOut(err.message);
    throw err;
  }
}

/** Sign-in: what the gateway says about this key (401 when it is not an admin key). */
export async function whoami(key: string): Promise<Session> {
  const me = await call<{ id: string; scope: "read" | "write"; expires_at: string | null }>(key, "/whoami");
  return { key, id: me.id, scope: me.scope, expiresAt: me.expires_at };
}

/** A query string from the defined values. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}
