// The gateway as it ships: the repository's own gateway.yaml (SQLite store, no `pipeline:` so the full default
// pipeline runs, the default catalog), changed only where a test must: the openai and anthropic providers point at
// fake upstreams (keys through the same ${VAR}s, every other provider's variable blanked so it stays off whatever
// the machine's environment holds), and one project with a live key, a budget and rate limits.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";
import YAML from "yaml";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./gateway.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "../upstreams/anthropic.ts";
import { startFakeOpenAI, type FakeOpenAI, type StreamPace } from "../upstreams/openai.ts";
import { settleWithin } from "../../core/deadline.ts";
import { unretiredEntries } from "./unretired-catalog.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export const SHIPPED_KEY = testKey("shipped");
export const SHIPPED_PROJECT = "shipped";
/** Generous enough that no test is refused, small enough that the headers say something. */
export const SHIPPED_LIMITS = { rpm: 100_000, tpm: 50_000_000 };
export const SHIPPED_BUDGET = { usd: "1000", period: "month" };

/**
 * The suites' Claude model is Claude Sonnet 4.5 on the Claude API (the agents' recorded fixtures name it), an
 * endpoint the catalog retires on 2026-11-30, after which the gateway routes it no more
 * (test/catalog-retirement.e2e.test.ts); their OpenAI models (gpt-5, gpt-5-mini, o3) shut down on 2026-12-11. Against the fakes no date matters, so each catalog entry with a retiring
 * endpoint is given as an operator's own entry without `retires` (the same endpoints and prices), unless the test
 * asks for the catalog's retirements as shipped.
 */
function withoutRetirements(config: Record<string, any>): void {
  for (const [id, entry] of Object.entries(unretiredEntries(config.include as string[]))) {
    if (!config.models?.[id]) (config.models ??= {})[id] = entry;
  }
}

/** The shipped gateway.yaml as an object, with the test's changes applied. */
export function shippedConfig(upstreams: { openai: string; anthropic: string }, opts: { retirements?: "as shipped" } = {}): Record<string, any> {
  const config = YAML.parse(readFileSync(resolve(ROOT, "gateway.yaml"), "utf8"));
  if (config.pipeline !== undefined) throw new Error("gateway.yaml ships with a pipeline: this suite expects the default one");
  if (config.store?.kind !== "sqlite") throw new Error(`gateway.yaml ships store.kind ${config.store?.kind}; this suite expects sqlite`);
  // Relative to the temporary directory the test config is written to (startTestGateway), so the catalog is
  // referenced by its absolute path while the SQLite path stays as shipped (a file in that temporary directory).
  config.include = (config.include as string[]).map((f) => resolve(ROOT, f));
  if (opts.retirements !== "as shipped") withoutRetirements(config);
  config.providers.openai.base_url = upstreams.openai;
  config.providers.anthropic.base_url = upstreams.anthropic;
  config.projects[SHIPPED_PROJECT] = {
    keys: [keyEntry("shipped-live", SHIPPED_KEY)],
    allow_models: ["*"],
    budget: SHIPPED_BUDGET,
    rate_limits: SHIPPED_LIMITS,
  };
  return config;
}

/** Every ${VAR} the shipped providers use, blank (= provider disabled, or its default) except the two the fakes answer. */
export function providerEnv(config: Record<string, any>): Record<string, string> {
  const env: Record<string, string> = {};
  // Every field, not only api_key: cloud providers switch on from other variables (credentials_file, AWS keys).
  for (const p of Object.values(config.providers)) {
    for (const m of JSON.stringify(p).matchAll(/\$\{(\w+)/g)) env[m[1]!] = "";
  }
  return { ...env, OPENAI_API_KEY: "sk-fake-upstream", ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY };
}

export async function startShippedGateway(upstreams: { openai: string; anthropic: string }): Promise<TestGateway> {
  const config = shippedConfig(upstreams);
  return startTestGateway(config, { env: providerEnv(config) });
}

/**
 * How the fakes pace a stream, chosen by the request itself so concurrent requests can differ: a `[pace:burst]`,
 * `[pace:tail]` or `[pace:<ms>]` marker anywhere in the messages (it survives every translation). No marker:
 * burst, the fast provider of the reported hang.
 */
export function paceOf(body: any): StreamPace {
  const m = /\[pace:(burst|tail|\d+)\]/.exec(JSON.stringify(body?.messages ?? null));
  if (!m) return "burst";
  return /^\d+$/.test(m[1]!) ? Number(m[1]) : (m[1] as "burst" | "tail");
}

/**
 * A long answer on request: `[words:N]` in the messages makes the fakes answer N words ("w0 w1 …"), so a burst
 * holds more than a socket's 16 KiB high-water mark (the reported hang needs a write the socket cannot take at once).
 */
export function longTextOf(body: any): string | undefined {
  const m = /\[words:(\d+)\]/.exec(JSON.stringify(body?.messages ?? null));
  return m ? longText(Number(m[1])) : undefined;
}
export const longText = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

export interface Shipped {
  gw: TestGateway;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  close(): Promise<void>;
}

/** Both fake upstreams (paced by paceOf) and the shipped gateway in front of them. */
export async function startShipped(): Promise<Shipped> {
  const openai = await startFakeOpenAI({ text: "Hello from the fake upstream, streaming word by word to the very end." });
  const anthropic = await startFakeAnthropic();
  openai.pace = paceOf;
  anthropic.pace = paceOf;
  openai.textFor = longTextOf;
  anthropic.textFor = longTextOf;
  const gw = await startShippedGateway({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  return {
    gw, openai, anthropic,
    close: async () => {
      await gw.close();
      await openai.close();
      await anthropic.close();
    },
  };
}

/** Rejects when `p` has not settled within `ms`: a hung stream fails its test with a message instead of stalling. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return settleWithin(p, ms, () => {
    throw new Error(`${what}: not finished after ${ms} ms (hung)`);
  });
}
