// Google-style custom methods on one wildcard route (`/api/v1beta/models/**` + `:generateContent`, `:countTokens`, …):
// app.ts registers one handler per (method, route) and this picks the endpoint from the text after the last colon.
import { GatewayError } from "../../errors.ts";
import type { EndpointSpec } from "../spec.ts";
import { GEMINI_MODELS_ROUTE } from "./generate.ts";

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

/**
 * The same custom methods with the model id as the path, no `models/` (`/api/v1beta/{creator}/{slug}:generateContent`):
 * @ai-sdk/google and @google/generative-ai (under LangChain's ChatGoogleGenerativeAI) prefix `models/` only to an id
 * without a slash, so every gateway id reaches them this way. Served for the action routes under GEMINI_MODELS_ROUTE,
 * for paths of the shape `{creator}/{slug}:{one of its methods}` (idRouteRest): whether the model exists is answered
 * after authentication, as on the models route; any other path there is the 404 it always was.
 */
export const GEMINI_ID_ROUTE = "/api/v1beta/:creator/**";

/** The wildcard route whose actions GEMINI_ID_ROUTE also serves. */
export const servedById = (route: string): boolean => route === GEMINI_MODELS_ROUTE;

/**
 * `{model}:{action}` (as the models route's `**` would have it) when GEMINI_ID_ROUTE's path has that shape. Whether the
 * model exists is the endpoint's to say, after authentication, as on the models route: a caller without a key learns
 * nothing about the catalog here either.
 */
export function idRouteRest(params: Record<string, string> | undefined): string | undefined {
  const slug = params?._ ?? "";
  if (!slug) return undefined; // `/v1beta/{something}:{action}`: not a creator/slug id
  const rest = `${params?.creator ?? ""}/${slug}`;
  return rest.lastIndexOf(":") === -1 ? undefined : rest;
}
