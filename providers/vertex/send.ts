// One authorized Vertex call: bearer token and project from the auth, the URL built for them; a 401 (an access
// token revoked or expired early) is retried once with a freshly exchanged token, as the Google clients do.
import type { CallOptions, Target } from "../../core/contracts/provider.ts";
import type { UpstreamResponse } from "../http.ts";
import type { VertexEnv } from "./env.ts";
import { vertexUrl, type Publisher } from "./url.ts";

export interface VertexCall {
  method: string;
  query?: string;
  body: string;
  headers?: Record<string, string>;
  /** Another model path than the target's (see vertexUrl). */
  resource?: { publisher: Publisher; model: string };
}

export async function vertexSend(env: VertexEnv, target: Target, call: Pick<CallOptions, "signal">, req: VertexCall): Promise<UpstreamResponse> {
  const { method, query = "", body, headers: extraHeaders = {} } = req;
  const once = async () => {
    const cred = await env.auth.credentials(target, call.signal);
    const url = vertexUrl({ baseUrl: target.credentials?.baseUrl ?? env.config.base_url, project: cred.project, location: env.location }, target, method, query, req.resource);
    const headers = { "content-type": "application/json", accept: "application/json", ...env.config.headers, ...extraHeaders, authorization: `Bearer ${cred.token}` };
    return { cred, res: await env.client.send({ url, headers, body }, call.signal, target.timeoutMs) };
  };
  const first = await once();
  if (first.res.status !== 401 || !first.cred.refreshable) return first.res;
  await first.res.body.dump().catch(() => {});
  env.auth.invalidate(first.cred.token);
  return (await once()).res;
}
