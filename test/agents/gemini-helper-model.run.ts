// `npm run test:agents`: Gemini CLI's helper model. Gemini CLI 0.61 sends its google_web_search tool (and web fetch,
// loop detection, …) to `gemini-3-flash-preview` by bare name, a model the default catalog lacks, and answers that
// 404 by retrying at once without end: 6,000 requests in 20 s, the run never finishing. docs/gemini.md ("Gemini
// CLI's helper models") gives the entries an operator adds; with them, taken as written, a run in which the model
// searches the web makes one helper call, gets Google's grounded answer back into its conversation and finishes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS } from "./agents.ts";
import { runAgentOnce } from "./run-once.ts";
import { MODEL } from "../helpers/agent-world.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "../helpers/shipped-config.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "../upstreams/openai-responses.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { FAKE_GEMINI_KEY, GROUNDED, startFakeGemini, type FakeGemini } from "../upstreams/gemini.ts";
import type { AgentScript } from "../upstreams/scripted-agent.ts";

const RUN_LIMIT_MS = 120_000;
const ROOT = join(import.meta.dirname, "../..");
const TASK = /SEARCH-TASK query=(\S+)/;
const FOUND = "SEARCH-RESULT-RECEIVED";
const MISSING = "SEARCH-RESULT-MISSING";

/** Searches the web with the agent's own tool; once answered, says whether the helper's grounded answer came back. */
const script: AgentScript = ({ tools, text, answered }) => {
  const query = TASK.exec(text)?.[1];
  if (!query) return undefined; // the helper call itself: the fake's grounded answer
  if (answered) return { text: text.includes(GROUNDED) ? FOUND : MISSING };
  return tools.some((t) => t.name === "google_web_search") ? { call: { name: "google_web_search", input: { query } } } : { text: "no web search tool offered" };
};

/** The `models:` docs/gemini.md tells an operator to add for Gemini CLI's helpers. */
function documentedHelperModels(): Record<string, any> {
  const doc = readFileSync(join(ROOT, "docs/gemini.md"), "utf8");
  const at = doc.indexOf("### Gemini CLI's helper models");
  expect(at, "docs/gemini.md has no section on Gemini CLI's helper models").toBeGreaterThanOrEqual(0);
  return YAML.parse(/```yaml\n([\s\S]*?)```/.exec(doc.slice(at))![1]!).models;
}

let openai: FakeOpenAIWithResponses;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gw: TestGateway;
let proxy: RecordingProxy;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startFakeOpenAIResponses(), startFakeAnthropic(), startFakeGemini()]);
  for (const f of [openai, anthropic, gemini]) f.script = script;
  const config = shippedConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  config.providers.gemini.base_url = gemini.baseUrl;
  config.models = { ...config.models, ...documentedHelperModels() };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GEMINI_API_KEY: FAKE_GEMINI_KEY } });
  proxy = await startRecordingProxy(gw.url);
});

afterAll(async () => {
  await proxy?.close();
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

describe("Gemini CLI searching the web through the gateway, with docs/gemini.md's helper entries", () => {
  it.each(["gemini", "anthropic"] as const)("on %s: one helper call, its grounded answer back to the model, and the run ends", { timeout: RUN_LIMIT_MS + 30_000 }, async (upstream) => {
    const agent = AGENTS.find((a) => a.id === "gemini-cli")!;
    const from = proxy.requests.length;
    const upstreamFrom = gemini.requests.length;
    const exit = await runAgentOnce({
      agent, origin: proxy.origin, key: SHIPPED_KEY, model: MODEL[upstream], limitMs: RUN_LIMIT_MS,
      prompt: () => "SEARCH-TASK query=lighthouse-opening-hours\nSearch the web for lighthouse opening hours and tell me what you found.",
    });
    const seen = proxy.requests.slice(from);
    const helper = seen.filter((r) => r.path.includes("gemini-3-flash-preview"));
    expect(exit.timedOut, `the agent never finished (${helper.length} helper requests, statuses ${[...new Set(helper.map((r) => r.status))].join(", ")})`).toBe(false);
    expect(helper.map((r) => r.status)).toEqual([200]);
    expect(seen.length, "requests the gateway got in the run").toBeLessThanOrEqual(10);
    // The helper reached the Gemini model the entry names, with Google Search grounding.
    const sent = gemini.requests.slice(upstreamFrom).filter((r) => r.body?.tools?.some((t: any) => t?.googleSearch));
    expect(sent.map((r) => r.path)).toEqual(["/v1beta/models/gemini-2.5-flash:generateContent"]);
    expect(exit.out).toContain(FOUND);
    expect(exit.code, exit.out.slice(-2000)).toBe(0);
  });
});
