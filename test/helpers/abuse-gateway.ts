// The gateway as a separate process, in the shipped shape (SQLite store, no `pipeline:` so the full default
// pipeline runs, a live key with a budget and rate limits) with short `server:` timeouts, in front of fake upstreams
// for every POST endpoint. Used by the abuse and fuzz suites: a request that kills the process shows up as a dead
// child, and `upstreamCalls()` says whether anything reached a provider.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { keyEntry, testKey } from "./gateway.ts";
import { startChildGateway, type ChildGateway } from "./child-gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { OPENAI_KEY, startFakeOpenAIMedia, type FakeOpenAIMedia } from "../upstreams/openai-media.ts";
import { RERANK_KEY, startFakeCohere, type Reranker } from "../upstreams/rerankers.ts";

export const ABUSE_KEY = testKey("abuse-live");

/** Short enough that slowloris tests end in seconds, long enough for a loaded CI machine. */
export const ABUSE_SERVER = { headers_timeout_ms: 1500, request_timeout_ms: 3000, keep_alive_timeout_ms: 5000, max_header_bytes: 16384 };

/** One model per POST endpoint, each on its own fake. */
export const MODELS = {
  chat: "openai/gpt-4o-mini",
  messages: "anthropic/claude-sonnet-4.5",
  embeddings: "openai/text-embedding-3-small",
  rerank: "cohere/rerank-v3.5",
  images: "openai/gpt-image-1",
  videos: "openai/sora-2",
} as const;

export interface AbuseGateway {
  child: ChildGateway;
  /** `${url}/api/v1` */
  baseURL: string;
  /** GET /metrics on the gateway's metrics listener. */
  metricsUrl: string;
  port: number;
  pid: number;
  /** Whatever the child wrote to stdout and stderr. */
  output(): string;
  /** Requests the fake upstreams have received so far. */
  upstreamCalls(): number;
  close(): Promise<void>;
}

/** `server` settings over ABUSE_SERVER's (a connection cap, ...). */
export async function startAbuseGateway(server: Record<string, unknown> = {}): Promise<AbuseGateway> {
  const [openai, anthropic, media, cohere]: [FakeOpenAI, FakeAnthropic, FakeOpenAIMedia, Reranker] = await Promise.all([
    startFakeOpenAI(), startFakeAnthropic(), startFakeOpenAIMedia(), startFakeCohere(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "mg-abuse-"));
  const configFile = join(dir, "gateway.yaml");
  const config = {
    server: { ...ABUSE_SERVER, signing_secret: "abuse-test-signing-secret", assets_dir: join(dir, "assets"), ...server },
    store: { kind: "sqlite", path: "./gateway.db" },
    providers: {
      up: { protocol: "openai", base_url: openai.baseUrl, api_key: "sk-fake-upstream" },
      claude: { protocol: "anthropic", base_url: anthropic.baseUrl, api_key: FAKE_ANTHROPIC_KEY },
      media: { protocol: "openai", base_url: media.baseUrl, api_key: OPENAI_KEY },
      cohere: { protocol: "cohere", base_url: cohere.baseUrl, api_key: RERANK_KEY },
    },
    models: {
      [MODELS.chat]: { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: { input: "0.00000015", output: "0.0000006" } }] },
      [MODELS.messages]: { type: "language", endpoints: [{ provider: "claude", model: "claude-sonnet-4-5-20250929", pricing: { input: "0.000003", output: "0.000015" } }] },
      [MODELS.embeddings]: { type: "embedding", context_window: 8191, dimensions: 1536, limits: { dimensions: "native" }, endpoints: [{ provider: "media", model: "text-embedding-3-small", pricing: { input: "0.00000002" } }] },
      [MODELS.rerank]: { type: "reranking", endpoints: [{ provider: "cohere", model: "rerank-v3.5", pricing: { search_unit: "0.002" } }] },
      [MODELS.images]: { type: "image", limits: { max_images: 4, reference_image: true }, endpoints: [{ provider: "media", model: "gpt-image-1", pricing: { image: "0.04" } }] },
      [MODELS.videos]: { type: "video", limits: { durations: [4, 8, 12], max_concurrent_jobs: 4, poll_initial_ms: 5, poll_max_ms: 20 }, endpoints: [{ provider: "media", model: "sora-2", pricing: { video_second: "0.1" } }] },
    },
    projects: {
      abuse: {
        keys: [keyEntry("abuse-live", ABUSE_KEY)],
        allow_models: ["*"],
        budget: { usd: "1000", period: "month" },
        // Generous: invalid bodies are refused before the limiter, and the valid ones must not be throttled.
        rate_limits: { rpm: 1_000_000, tpm: 1_000_000_000 },
      },
    },
  };
  writeFileSync(configFile, YAML.stringify(config));
  const child = await startChildGateway(configFile, { LOG_LEVEL: "warn" });
  let out = "";
  child.proc.stdout!.on("data", (d) => (out += d));
  child.proc.stderr!.on("data", (d) => (out += d));
  const port = Number(new URL(child.url).port);
  return {
    child,
    baseURL: child.baseURL,
    metricsUrl: child.metricsUrl!,
    port,
    pid: child.proc.pid!,
    output: () => out,
    upstreamCalls: () => openai.requests.length + anthropic.requests.length + media.requests.length + cohere.requests.length,
    async close() {
      await child.stop();
      await Promise.all([openai.close(), anthropic.close(), media.close(), cohere.close()]);
    },
  };
}

/** The child is still the same running process. */
export function alive(gw: AbuseGateway): boolean {
  const p = gw.child.proc;
  if (p.exitCode !== null || p.signalCode !== null || p.pid !== gw.pid) return false;
  try {
    process.kill(gw.pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A valid chat completion through the full pipeline: 200 with a completion, one more upstream call. */
export async function validChat(gw: AbuseGateway): Promise<{ status: number; body: any; upstreamDelta: number }> {
  const before = gw.upstreamCalls();
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${ABUSE_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODELS.chat, messages: [{ role: "user", content: "still there?" }], max_tokens: 16 }),
  });
  return { status: res.status, body: await res.json(), upstreamDelta: gw.upstreamCalls() - before };
}
