// What a shutdown's drain counts (the streams it cuts: their 503s, tokens and cost) lands after the last scrape before
// the process exits, so a pull-based scrape never saw it: the metrics listener now stays up, once the gateway has
// closed, until it has answered one more scrape — only when a scraper (two scrapes or more) watches it and something
// was counted since its last scrape, and bounded by the grace plus one scrape interval from the signal.
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, startTestGateway, testKey } from "./helpers/gateway.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";

const KEY = testKey("finalscrape");
const TEXT = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
const CUT = 'gateway_requests_total{endpoint="chat",model="t/slow",provider="up",code="503"}';

let slow: FakeOpenAI;

const config = () => ({
  store: { kind: "memory" },
  routing: { max_attempts: 1 },
  providers: { up: { protocol: "openai", base_url: slow.baseUrl, api_key: "sk-fake-upstream" } },
  models: { "t/slow": { endpoints: [{ provider: "up", model: "m", pricing: { input: "0.000002", output: "0.00001" } }] } },
  projects: { p: { keys: [keyEntry("k", KEY)] } },
});

/** Opens a stream and reads it to its end. */
async function stream(base: string): Promise<string> {
  const res = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "t/slow", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  return res.text();
}

beforeAll(async () => {
  slow = await startFakeOpenAI({ text: TEXT, chunkDelayMs: 100 });
});
afterAll(async () => {
  await slow?.close();
});

describe("the metrics listener at shutdown", () => {
  it("answers one more scrape after the drain, and that scrape counts the stream the shutdown cut (503)", async () => {
    const gw = await startTestGateway(config());
    try {
      // Scraped twice, 200 ms apart: a scraper is watching (one more scrape is waited for up to 1.2 s).
      await (await fetch(gw.metricsUrl!)).text();
      await new Promise((r) => setTimeout(r, 200));
      const first = await (await fetch(gw.metricsUrl!)).text();
      expect(first).not.toContain(CUT);
      const done = stream(gw.baseURL);
      await new Promise((r) => setTimeout(r, 300)); // the stream is under way
      let closed = false;
      const shutdown = gw.shutdown({ graceMs: 1000 }).then(() => (closed = true));
      expect(await done).toContain('"error"');
      await new Promise((r) => setTimeout(r, 100)); // the drain has settled and closed the gateway
      expect(closed).toBe(false); // still waiting for the scrape
      const last = await (await fetch(gw.metricsUrl!)).text();
      expect(last).toContain(`${CUT} 1`);
      await shutdown;
      await expect(fetch(gw.metricsUrl!)).rejects.toThrow(); // closed once that scrape was answered
    } finally {
      await gw.close().catch(() => {});
    }
  });

  it("does not wait when nothing ever scraped it, when one curl did (no scraper), nor when nothing was counted since the last scrape", async () => {
    const never = await startTestGateway(config());
    let t0 = performance.now();
    await never.shutdown({ graceMs: 30_000 });
    expect(performance.now() - t0).toBeLessThan(1000);
    // One readiness curl of /metrics is not a scraper: it used to hold every shutdown for the grace (5 s by default).
    const once = await startTestGateway(config());
    await (await fetch(once.metricsUrl!)).text();
    t0 = performance.now();
    await once.shutdown({ graceMs: 3000 });
    expect(performance.now() - t0).toBeLessThan(1000);
    // Scraped by a scraper, but idle since its last scrape: that scrape already read everything.
    const idle = await startTestGateway(config());
    await (await fetch(idle.metricsUrl!)).text();
    await new Promise((r) => setTimeout(r, 200));
    await (await fetch(idle.metricsUrl!)).text();
    t0 = performance.now();
    await idle.shutdown({ graceMs: 3000 });
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
