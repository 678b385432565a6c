// Example third-party plugin: refuses the fields that name state kept at a provider rather than in the gateway,
// for projects that share the operator's provider keys (docs/security.md, "Provider-side state on the operator's
// key"). On a shared key such an id reaches whatever the operator's account holds: another tenant's file, stored
// prompt, conversation or cache, and with a Vertex gs:// URI the operator's own Cloud Storage.
//   - OpenAI: a Responses `conversation`, a stored `prompt: { id }`, any `file_id` (Responses input_file /
//     input_image, a chat `file` part); Anthropic: a block's `source: { type: "file", file_id }`.
//   - Gemini and Vertex: `cachedContent`, and a Files API (https://generativelanguage.googleapis.com/…) or gs://
//     URI wherever a URL goes: `fileData.fileUri` on the Gemini routes, a chat `image_url.url`, a Responses
//     `image_url` / `file_url`, a Messages `source.url` (the gateway hands such URIs to Gemini as they are).
// Load it from gateway.yaml, right after auth. A `pipeline:` replaces the default one whole (docs/plugins.md), so
// it lists every built-in plugin, in the default order, with this one inserted; leaving one out drops its policy
// (allowlist, budget, rate limits, idempotency, the cache, the ledger):
//   plugins:
//     provider-state-guard: { module: ./docs/examples/provider-state-guard.ts, options: { projects: [alpha, beta] } }
//   pipeline: [auth, provider-state-guard, allowlist, budget, rate-limit, idempotency, response-cache, cache-marker,
//              router, fallback, stream-transcoder, usage-metering, guardrails]
// Only the public entry (package.json "exports"), never internal paths: those may move between releases.
import { definePlugin, GatewayError } from "model-gateway/plugin";

interface Options {
  /** Projects held to it; unset: every project. */
  projects?: string[];
}

/** Keys whose string value is a URL a provider may read itself. */
const URL_KEYS = new Set(["url", "image_url", "file_url", "fileUri", "file_uri"]);
/** Gemini's own storage: the Files API and Cloud Storage, read with the operator's credentials. */
const PROVIDER_URI = /^\s*(gs:\/\/|https:\/\/generativelanguage\.googleapis\.com\/)/i;

/** The first field of `body` that names provider-side state, as a path (`input[0].content[1].file_id`). */
export function providerStateField(body: unknown): string | undefined {
  if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const top = body as Record<string, unknown>;
  for (const key of ["conversation", "cachedContent", "cached_content"]) if (top[key] !== undefined && top[key] !== null) return key;
  const prompt = top.prompt;
  if (prompt && typeof prompt === "object" && (prompt as Record<string, unknown>).id !== undefined) return "prompt.id";
  // Iterative, so a deeply nested body costs no stack.
  const stack: Array<[unknown, string]> = [[body, ""]];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (!node || typeof node !== "object") continue;
    const entries: Array<[string, unknown]> = Array.isArray(node) ? node.map((v, i) => [`[${i}]`, v]) : Object.entries(node);
    for (const [key, value] of entries) {
      const at = key.startsWith("[") ? `${path}${key}` : path ? `${path}.${key}` : key;
      if (key === "file_id" && value !== undefined && value !== null) return at;
      if (URL_KEYS.has(key) && typeof value === "string" && PROVIDER_URI.test(value)) return at;
      if (value && typeof value === "object") stack.push([value, at]);
    }
  }
  return undefined;
}

export default definePlugin<Options>({
  name: "provider-state-guard",
  dependsOn: ["auth"],
  optionsSchema: {
    type: "object",
    additionalProperties: false,
    properties: { projects: { type: "array", items: { type: "string" } } },
  },
  async handle(ctx, next, { options }) {
    const project = ctx.auth?.projectId;
    const held = !options.projects || (project !== undefined && options.projects.includes(project));
    const field = held ? providerStateField(ctx.body) : undefined;
    if (field) {
      throw new GatewayError(400, "INVALID_REQUEST", `${field} names state kept at the provider, which this gateway does not serve to project ${project} on a shared key`, {
        details: { field, reason: "provider_state" },
      });
    }
    await next();
  },
});
