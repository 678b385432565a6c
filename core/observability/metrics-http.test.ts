// The metrics listener stays reachable for a scraper when other connections hold it open and send nothing.
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Socket } from "node:net";
import { Registry } from "prom-client";
import type { Gateway } from "../gateway.ts";
import { createLogger } from "../log.ts";
import { startMetricsListener, type MetricsListener } from "./metrics-http.ts";

const fakeGateway = { config: { metrics: {} }, metrics: { registry: new Registry() } } as unknown as Gateway;

let listener: MetricsListener | undefined;
const held: Socket[] = [];
afterEach(async () => {
  for (const s of held.splice(0)) s.destroy();
  await listener?.close();
  listener = undefined;
});

/** `n` connections that connect and never send a byte; resolves once all are open. */
async function silentSockets(url: string, n: number): Promise<Socket[]> {
  const { hostname, port } = new URL(url);
  const opened = Array.from({ length: n }, () => new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port) }, () => resolve(s));
    s.on("error", () => {});
    s.once("error", reject);
    held.push(s);
  }));
  return Promise.all(opened);
}

describe("metrics listener under silent connections", () => {
  it("answers a scrape at once while 32 silent connections are open", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    await silentSockets(listener.url, 32);
    await new Promise((r) => setTimeout(r, 100)); // let the server accept every one of them
    const t0 = Date.now();
    const res = await fetch(listener.url, { signal: AbortSignal.timeout(3000) });
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("answers again and again while silent connections keep arriving", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    for (let round = 0; round < 3; round++) {
      await silentSockets(listener.url, 40);
      await new Promise((r) => setTimeout(r, 50));
      const res = await fetch(listener.url, { signal: AbortSignal.timeout(3000) });
      expect(res.status).toBe(200);
    }
  });

  it("closes a connection that sends nothing within a few seconds", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [s] = await silentSockets(listener.url, 1);
    const t0 = Date.now();
    await new Promise<void>((resolve) => s.once("close", () => resolve()));
    expect(Date.now() - t0).toBeLessThan(6000);
  }, 15_000);
});
