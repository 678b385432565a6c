// The gateway as shipped (its own process, SQLite store, the full default pipeline, OTLP tracing on, a live key with
// a budget and rate limits) in front of the hostile upstream (test/upstreams/hostile-stream.ts) and a well-behaved
// OpenAI fake, for issue 25's freeze and billing tests. A second client times its requests against it while a
// hostile request runs (`timedWhile`), the gateway's own event-loop delay is read from /metrics (prom-client's
// monitorEventLoopDelay, reset on every scrape), and the ledger is read from the SQLite file as it is written.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import YAML from "yaml";
import { keyEntry, testKey } from "./gateway.ts";
import { startChildGateway, type ChildGateway } from "./child-gateway.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.ts";
import { startFakeOpenAI, type FakeOpenAI } from "../upstreams/openai.ts";
import { startHostileStreamUpstream, type HostileStreamUpstream } from "../upstreams/hostile-stream.ts";

export const HOSTILE_KEY = testKey("hostile-live");

/**
 * The longest a second client's request may wait, or the gateway's event loop may stall, while a hostile request
 * runs. Before issue 25 these were 1.8–13.8 s; the work is now linear and shared out in slices of milliseconds, so
 * a request through the full pipeline takes a few ms. 750 ms leaves room for a loaded 2-core CI machine (GC pauses,
 * the other test files' processes) while staying an order of magnitude under any of the stalls it guards against.
 */
export const MAX_WAIT_MS = 750;

const price = { input: "0.000001", output: "0.000002" };

export interface HostileGateway {
  child: ChildGateway;
  url: string;
  baseURL: string;
  /** The metrics listener's /metrics URL. */
  metricsUrl: string;
  hostile: HostileStreamUpstream;
  fake: FakeOpenAI;
  otlp: OtlpReceiver;
  headers(requestId?: string): Record<string, string>;
  /** A cheap chat completion through the whole pipeline (the second client's request). */
  probe(): Promise<void>;
  /** The ledger record of a request, once written (undefined if none is). */
  ledger(requestId: string): Promise<Record<string, any> | undefined>;
  /** The gateway's longest event-loop delay since the last call, in ms (the first call starts the window). */
  loopDelayMs(): Promise<number>;
  close(): Promise<void>;
}

export async function startHostileGateway(): Promise<HostileGateway> {
  const [hostile, fake, otlp] = await Promise.all([startHostileStreamUpstream(), startFakeOpenAI(), startOtlpReceiver()]);
  const dir = mkdtempSync(join(tmpdir(), "mg-hostile-"));
  const db = join(dir, "gateway.db");
  const config = {
    store: { kind: "sqlite", path: db },
    telemetry: { service_name: "gw-hostile", otlp: { endpoint: otlp.url } },
    providers: {
      up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" },
      hostile: { protocol: "openai", base_url: hostile.baseUrl, api_key: "sk-hostile" },
      "hostile-claude": { protocol: "anthropic", base_url: hostile.baseUrl, api_key: "sk-ant-hostile" },
    },
    models: {
      "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "up", model: "gpt-4o-mini", pricing: price }] },
      ...Object.fromEntries(["long-line", "long-line-first", "no-usage"].flatMap((m) => [
        [`hostile/${m}`, { type: "language", endpoints: [{ provider: "hostile", model: m, pricing: price }] }],
        [`hostile-claude/${m}`, { type: "language", endpoints: [{ provider: "hostile-claude", model: m, pricing: price }] }],
      ])),
    },
    projects: {
      acme: {
        keys: [keyEntry("live", HOSTILE_KEY)],
        budget: { usd: "1000", period: "month" },
        rate_limits: { rpm: 100_000, tpm: 1_000_000_000 },
      },
    },
  };
  const configFile = join(dir, "gateway.yaml");
  writeFileSync(configFile, YAML.stringify(config));
  const child = await startChildGateway(configFile, { LOG_LEVEL: "warn" });
  let reader: Database.Database | undefined;
  const headers = (requestId?: string) => ({
    authorization: `Bearer ${HOSTILE_KEY}`, "content-type": "application/json", ...(requestId ? { "x-request-id": requestId } : {}),
  });
  return {
    child, url: child.url, baseURL: child.baseURL, metricsUrl: child.metricsUrl!, hostile, fake, otlp, headers,
    async probe() {
      const res = await fetch(`${child.baseURL}/chat/completions`, {
        method: "POST", headers: headers(),
        body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "still there?" }], max_tokens: 8 }),
      });
      if (res.status !== 200) throw new Error(`probe answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    },
    async ledger(requestId) {
      reader ??= new Database(db, { readonly: true, fileMustExist: true });
      // Written before the response completes; a cut-off stream's record follows its end by a moment.
      for (let i = 0; i < 100; i++) {
        const row = reader.prepare("SELECT * FROM ledger_all WHERE request_id = ?").get(requestId) as Record<string, any> | undefined;
        if (row) return row;
        await sleep(20);
      }
      return undefined;
    },
    async loopDelayMs() {
      const text = await (await fetch(child.metricsUrl!)).text();
      const m = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
      if (!m) throw new Error("no nodejs_eventloop_lag_max_seconds on /metrics");
      return Number(m[1]) * 1000;
    },
    async close() {
      reader?.close();
      await child.stop();
      await Promise.all([hostile.close(), fake.close(), otlp.close()]);
    },
  };
}

/**
 * Runs `work` while a second client sends `probe` requests one after another (10 ms apart); returns what `work`
 * returned and how long each probe waited. Probing starts before `work` and ends after it.
 */
export async function timedWhile<T>(work: () => Promise<T>, probe: () => Promise<void>): Promise<{ result: T; waits: number[]; worst: number }> {
  const waits: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await probe();
      waits.push(performance.now() - t0);
      await sleep(10);
    }
  })();
  try {
    await sleep(30);
    const result = await work();
    await sleep(30);
    return { result, waits, worst: Math.max(...waits) };
  } finally {
    running = false;
    await loop;
  }
}
