// The route a request matched, as a template (`/api/v1/responses/{id}`, `/api/v1beta/models/{model}:generateContent`):
// the SERVER span's name and http.route, never the path itself, whose ids and model names would make one series per
// request in a trace backend (OTel HTTP semantic conventions: http.route is low-cardinality).
import type { EndpointSpec } from "../endpoints/spec.ts";

const templates = new WeakMap<EndpointSpec, string>();

export function routeTemplate(spec: Pick<EndpointSpec, "route" | "action">): string {
  const cached = templates.get(spec as EndpointSpec);
  if (cached) return cached;
  const t = spec.route
    .split("/")
    .map((seg) => (seg === "**" ? (spec.action ? `{model}:${spec.action}` : "{path}") : seg.startsWith(":") ? `{${seg.slice(1)}}` : seg))
    .join("/");
  templates.set(spec as EndpointSpec, t);
  return t;
}
