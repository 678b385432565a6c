// The metrics listener stays reachable for a scraper when other connections hold it open and send nothing.
import { afterEach, describe, expect, it } from "vitest";
import { connect, type Socket } from "node:net";
import { Registry } from "prom-client";
import type { Gateway } from "../gateway.ts";
import { createLogger } from "../log.ts";
import { startMetricsListener, type MetricsListener } from "./metrics-http.ts";
import { ScrapeWatch } from "../scrape-watch.ts";
import { MAX_HEADER_LINES } from "../http/request-head.ts";
import { exchange, type RawResponse } from "../../test/helpers/raw-http.ts";

const fakeGateway = { config: { metrics: {} }, metrics: { registry: new Registry(), scrapes: new ScrapeWatch(), requests: { added: 0 } } } as unknown as Gateway;

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
    // Starved by them, the scrape would never be answered: the bound is a hang's, generous for a loaded machine.
    const res = await fetch(listener.url, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
  }, 15_000);

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
    // Never closed, it would hold the test to its timeout.
    await new Promise<void>((resolve) => s.once("close", () => resolve()));
  }, 15_000);
});

// The API port answers these heads in its envelope (core/http/request-head.ts); the metrics port did not: Node's
// bare 400 with an empty body without Host, and no answer at all past 2000 header lines.
describe("request heads Node's parser leaves to the listener", () => {
  /** Sends `raw` on a fresh connection; what the listener answered before it closed. */
  async function send(raw: string): Promise<RawResponse[]> {
    const port = Number(new URL(listener!.url).port);
    const x = await exchange(port, async (w) => void (await w.write(raw)), { waitMs: 10_000 });
    return x.responses;
  }

  it("an HTTP/1.1 scrape without Host: 400 in the listener's JSON envelope naming Host", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [r, ...more] = await send("GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(more).toEqual([]);
    expect(r?.status).toBe(400);
    expect(r?.headers["content-type"]).toBe("application/json");
    expect(r?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "The Host header is required on an HTTP/1.1 request" } });
  });

  it("a scrape with two Host lines: 400 naming Host, not served", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [r, ...more] = await send("GET /metrics HTTP/1.1\r\nHost: m\r\nHost: n\r\nConnection: close\r\n\r\n");
    expect(more).toEqual([]);
    expect(r?.status).toBe(400);
    expect(r?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "The Host header appears 2 times; a request carries exactly one" } });
  });

  it("an Expect other than 100-continue without Host: the missing Host's 400 in the envelope, not a bare 417", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [r] = await send("GET /metrics HTTP/1.1\r\nExpect: something-else\r\nConnection: close\r\n\r\n");
    expect(r?.status).toBe(400);
    expect(r?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "The Host header is required on an HTTP/1.1 request" } });
  });

  it("an Expect other than 100-continue with Host: 417 in the envelope", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [r] = await send("GET /metrics HTTP/1.1\r\nHost: m\r\nExpect: something-else\r\nConnection: close\r\n\r\n");
    expect(r?.status).toBe(417);
    expect(r?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: expect.stringContaining("only 100-continue") } });
  });

  it("Expect: 100-continue with two Host lines or none: the 400 alone, no 100 Continue inviting the body first", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const two = await send("GET /metrics HTTP/1.1\r\nHost: m\r\nHost: n\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
    expect(two.map((r) => r.status)).toEqual([400]);
    expect(two[0]?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "The Host header appears 2 times; a request carries exactly one" } });
    const none = await send("GET /metrics HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
    expect(none.map((r) => r.status)).toEqual([400]);
    expect(none[0]?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "The Host header is required on an HTTP/1.1 request" } });
  });

  it("Expect: 100-continue on a well-formed scrape: served, and the connection closes after it (a body may still follow)", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const rs = await send("GET /metrics HTTP/1.1\r\nHost: m\r\nExpect: 100-continue\r\n\r\n");
    expect(rs.map((r) => r.status)).toEqual([200]);
    expect(rs[0]?.headers.connection).toBe("close");
  });

  it("an HTTP/1.0 scrape without Host is still served", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [r] = await send("GET /metrics HTTP/1.0\r\n\r\n");
    expect(r?.status).toBe(200);
  });

  it("2500 header lines in a small head: 431 naming the count, not served with the lines past 2000 dropped", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const raw = `GET /metrics HTTP/1.1\r\nhost: m\r\n${"a: \r\n".repeat(2499)}connection: close\r\n\r\n`;
    expect(raw.length).toBeLessThan(16_384); // within the listener's maxHeaderSize: the count is what is refused
    const [r, ...more] = await send(raw);
    expect(more).toEqual([]);
    expect(r?.status).toBe(431);
    expect(r?.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: `Request has 2501 header lines; at most ${MAX_HEADER_LINES} are accepted` } });
  });

  it(`${MAX_HEADER_LINES} header lines are served`, async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const [r] = await send(`GET /metrics HTTP/1.1\r\nhost: m\r\n${"a: \r\n".repeat(MAX_HEADER_LINES - 2)}connection: close\r\n\r\n`);
    expect(r?.status).toBe(200);
  });
});

describe("a head Node's parser refuses", () => {
  it("2500 header lines over 16 KiB: 431 in the JSON envelope, not a closed connection", async () => {
    listener = await startMetricsListener(fakeGateway, createLogger("silent"), "127.0.0.1", 0);
    const raw = `GET /metrics HTTP/1.1\r\nhost: m\r\n${Array.from({ length: 2500 }, (_, i) => `x-filler-${i}: v\r\n`).join("")}\r\n`;
    expect(raw.length).toBeGreaterThan(16_384);
    const x = await exchange(Number(new URL(listener.url).port), async (w) => void (await w.write(raw)), { waitMs: 10_000 });
    expect(x.responses).toHaveLength(1);
    expect(x.responses[0]!.status).toBe(431);
    expect(x.responses[0]!.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "Request header fields too large" } });
  });
});
