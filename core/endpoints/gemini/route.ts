// Google-style custom methods on one wildcard route (`/api/v1beta/models/**` + `:generateContent`, `:countTokens`, …):
// app.ts registers one handler per (method, route) and this picks the endpoint from the text after the last colon.
import { GatewayError } from "../../errors.ts";
import type { EndpointSpec } from "../spec.ts";

export interface ActionRoute {
  method: EndpointSpec["method"];
  route: string;
  /** `rest` is what the route's `**` matched: `{model}:{action}`. */
  pick(rest: string): { spec: EndpointSpec; params: Record<string, string> } | { error: GatewayError };
}

export function actionRoutes(specs: EndpointSpec[]): ActionRoute[] {
  const groups = new Map<string, Map<string, EndpointSpec>>();
  for (const s of specs) {
    if (!s.action) continue;
    const key = `${s.method} ${s.route}`;
    if (!groups.has(key)) groups.set(key, new Map());
    groups.get(key)!.set(s.action, s);
  }
  return [...groups].map(([key, byAction]) => {
    const [method, route] = key.split(" ") as [EndpointSpec["method"], string];
    return {
      method,
      route,
      pick(rest) {
        const at = rest.lastIndexOf(":");
        const action = at === -1 ? "" : rest.slice(at + 1);
        const spec = byAction.get(action);
        if (!spec || at === 0) {
          const known = [...byAction.keys()].join(", ");
          return { error: new GatewayError(404, "NOT_FOUND", `No method ${action ? `"${action}"` : "given"} on ${route.replace("/**", "/{model}")}: use one of ${known}`, { details: { field: "method", supported: [...byAction.keys()] } }) };
        }
        return { spec, params: { model: rest.slice(0, at), action } };
      },
    };
  });
}

/** Is this a request path of the Gemini protocol (for renderers that run before any endpoint is known)? */
export const isGeminiPath = (path: string): boolean => path.startsWith("/api/v1beta/");
