// `npm run test:agents`: Codex CLI on a model whose upstream streams an answer past server.upstream_limits.answer_bytes
// (a broken upstream that never stops). The gateway cuts the stream (answer_too_large, x-should-retry: false on the
// other protocols); Codex must show why and stop after that ONE upstream call. When the failed response's code was
// `server_error`, Codex sent the request again five times (stream_max_retries), each run and billed upstream again,
// each cut the same way. On the shipped gateway.yaml, the openai and groq providers pointed at the runaway upstream.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS } from "./agents.ts";
import { runAgentOnce } from "./run-once.ts";
import { MODEL } from "../helpers/agent-world.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { providerEnv, shippedConfig, SHIPPED_KEY } from "../helpers/shipped-config.ts";
import { startRunawayUpstream, type RunawayUpstream } from "../upstreams/runaway-stream.ts";

const RUN_LIMIT_MS = 120_000;
const BOUND = 4096;
const SETTING = "server.upstream_limits.answer_bytes";

let up: RunawayUpstream;
let gw: TestGateway;

beforeAll(async () => {
  up = await startRunawayUpstream();
  const config = shippedConfig({ openai: up.baseUrl, anthropic: up.baseUrl });
  config.providers.groq.base_url = up.baseUrl;
  config.server = { ...config.server, upstream_limits: { answer_bytes: BOUND } };
  gw = await startTestGateway(config, { env: { ...providerEnv(config), GROQ_API_KEY: "sk-fake-upstream" } });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

// Passed through from OpenAI's /responses (the relay cuts it) and translated from a chat upstream (the translator does).
const cells = [["openai-responses"], ["openai-chat"]] as const;

describe("Codex CLI on an upstream whose answer goes past server.upstream_limits.answer_bytes", () => {
  it.each(cells)("on %s: shows the bound and stops after the one upstream call", { timeout: RUN_LIMIT_MS + 30_000 }, async (upstream) => {
    const codex = AGENTS.find((a) => a.id === "codex")!;
    const before = up.calls.length;
    const exit = await runAgentOnce({ agent: codex, origin: gw.url, key: SHIPPED_KEY, model: MODEL[upstream], prompt: () => "Write a very long story.", limitMs: RUN_LIMIT_MS });
    expect(exit.timedOut, "Codex kept asking again").toBe(false);
    expect(up.calls.length - before, "upstream calls (one, not one per Codex retry)").toBe(1);
    // Codex shows why: the bound, the setting that raises it and the gateway's code.
    expect(exit.out).toContain(SETTING);
    expect(exit.out).toContain("UPSTREAM_ERROR answer_too_large");
    expect(exit.out).not.toMatch(/Reconnecting/);
  });
});
