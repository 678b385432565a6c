import { describe, expect, it } from "vitest";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { drain, InFlight } from "./shutdown.ts";
import { ScrapeWatch } from "./scrape-watch.ts";
import { captureLogger } from "../test/helpers/log-capture.ts";

async function drainable(closeGateway: () => Promise<void>) {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { logger, log } = captureLogger("info");
  return { t: { server, sockets: new Set<never>(), inflight: new InFlight(), log: logger, startDraining() {}, closeGateway }, log };
}

describe("drain", () => {
  it("a gateway that closes cleanly: shutdown complete, resolved (exit 0)", async () => {
    const { t, log } = await drainable(async () => {});
    await drain(t, 1000);
    expect(log.records().find((r) => r.msg === "shutdown complete")?.level).toBe(30);
  });

  it("a gateway whose close fails (answered records saved nowhere): said at error, and the shutdown rejects, so the process exits non-zero", async () => {
    const lost = new Error("3 ledger record(s) of answered requests could not be saved");
    const { t, log } = await drainable(async () => { throw lost; });
    await expect(drain(t, 1000)).rejects.toBe(lost);
    const line = log.records().find((r) => /^shutdown complete/.test(r.msg));
    expect(line).toMatchObject({ level: 50, error: lost.message });
  });

  it("the wait for one more scrape ends by the signal's grace plus one interval: a slow close comes out of it, not on top", async () => {
    // Scraped every 300 ms, a request counted since: one more scrape is waited for, up to 300 ms + 1 s. Grace 300 ms:
    // the shutdown ends by 300 + 300 + 1000 = 1600 ms after the signal, though the close alone takes 1000 ms.
    let now = 0;
    const scrapes = new ScrapeWatch(() => now);
    let counted = 0;
    scrapes.reading(() => counted)();
    now = 300;
    scrapes.reading(() => counted)();
    counted = 1;
    const { t, log } = await drainable(() => new Promise((r) => setTimeout(r, 1000)));
    const t0 = performance.now();
    await drain({ ...t, metrics: { scrapes, close: async () => {} } }, 300);
    const took = performance.now() - t0;
    const wait = log.records().find((r) => /^keeping \/metrics up/.test(r.msg)) as { withinMs?: number } | undefined;
    expect(wait?.withinMs).toBeGreaterThan(0);
    expect(wait!.withinMs).toBeLessThanOrEqual(600);
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(2200);
  });
});
