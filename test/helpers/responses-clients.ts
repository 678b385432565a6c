// One shipped gateway (gateway.yaml: SQLite store, the full default pipeline, the default catalog) in front of the
// three faithful fakes, for the Responses API client tests: the openai, anthropic and gemini providers point at
// the fakes, every other provider stays off, and a few extra projects exercise the policies (a tight allowlist, a
// spent budget, a low rate limit).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./gateway.ts";
import { SHIPPED_KEY, SHIPPED_PROJECT, shippedConfig } from "./shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "../upstreams/openai-responses.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "../upstreams/gemini.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The three backends: an OpenAI-backed (native: the upstream's own /responses), an Anthropic-backed and a
 * Gemini-backed model (translated) of the default catalog, with the upstream path each request must take.
 */
export const BACKENDS = [
  { model: "openai/gpt-4o-mini", upstream: "openai", path: /^\/v1\/responses$/ },
  { model: "anthropic/claude-sonnet-4", upstream: "anthropic", path: /^\/v1\/messages$/ },
  { model: "google/gemini-2.5-flash", upstream: "gemini", path: /^\/v1beta\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent)/ },
] as const;
export type Upstream = (typeof BACKENDS)[number]["upstream"];

export const KEY = SHIPPED_KEY;
export const PROJECT = SHIPPED_PROJECT;
/** A project allowed only openai/* models. */
export const ALLOW_KEY = testKey("rsp-allow");
/** A project whose budget is (nearly) nothing. */
export const BROKE_KEY = testKey("rsp-broke");
/** A project with 2 requests per minute. */
export const LIMITED_KEY = testKey("rsp-limited");
export const LIMITED_RPM = 2;

export interface ResponsesClientsEnv {
  gw: TestGateway;
  openai: FakeOpenAIWithResponses;
  anthropic: FakeAnthropic;
  gemini: FakeGemini;
  /** The requests one fake received, newest last. */
  requestsOf(u: Upstream): { path: string; body: any }[];
  close(): Promise<void>;
}

/** The catalog entry of `model` with `native_responses` set (or cleared) on its endpoints, as a gateway.yaml override. */
function nativeOverride(model: string, native: boolean): Record<string, unknown> {
  const catalog = YAML.parse(readFileSync(resolve(ROOT, "catalog/models.yaml"), "utf8"));
  const entry = structuredClone(catalog.models[model]);
  entry.endpoints = entry.endpoints.map((e: Record<string, unknown>) => ({ ...e, native_responses: native }));
  return entry;
}

/**
 * The OpenAI-backed model is served through the upstream's own /responses (catalog `native_responses`, set here
 * whatever the shipped catalog says) unless `native: false`, which translates it to chat completions like the other
 * two. The OpenAI fake serves both /chat/completions and /responses.
 */
export async function startResponsesClients(opts: { native?: boolean; configure?: (config: Record<string, any>) => void } = {}): Promise<ResponsesClientsEnv> {
  const [openai, anthropic, gemini] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic(), startFakeGemini()]);
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  config.models ??= {};
  config.models["openai/gpt-4o-mini"] = nativeOverride("openai/gpt-4o-mini", opts.native !== false);
  config.projects["rsp-allow"] = { keys: [keyEntry("rsp-allow", ALLOW_KEY)], allow_models: ["openai/*"] };
  config.projects["rsp-broke"] = { keys: [keyEntry("rsp-broke", BROKE_KEY)], allow_models: ["*"], budget: { usd: "0.0000001", period: "day" } };
  config.projects["rsp-limited"] = { keys: [keyEntry("rsp-limited", LIMITED_KEY)], allow_models: ["*"], rate_limits: { rpm: LIMITED_RPM } };
  // Every provider's key variable blank (= provider off, whatever the machine's environment holds) but the fakes'.
  const env: Record<string, string> = {};
  for (const p of Object.values(config.providers) as { api_key?: string }[]) {
    for (const m of String(p.api_key ?? "").matchAll(/\$\{(\w+)/g)) env[m[1]!] = "";
  }
  Object.assign(env, { OPENAI_API_KEY: "sk-fake-upstream", ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY, GEMINI_API_KEY: FAKE_GEMINI_KEY });
  opts.configure?.(config);
  const gw = await startTestGateway(config, { env });
  const fakes = { openai, anthropic, gemini };
  return {
    gw, openai, anthropic, gemini,
    requestsOf: (u) => fakes[u].requests,
    close: async () => {
      await gw.close();
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    },
  };
}
