// Connections that hold the gateway open without finishing a request (security issue 25, item 5), against the
// gateway as a separate process in the shipped shape with short `server:` timeouts and a connection cap of 20.
// Idle (never a byte, or keep-alive after a response) and slow (headers or body a byte at a time) connections fill
// the cap; the next connection is closed unanswered instead of taking a file descriptor more; each held one is
// closed by its timeout within a stated bound, and then the gateway answers again.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABUSE_KEY, ABUSE_SERVER, MODELS, startAbuseGateway, type AbuseGateway } from "./helpers/abuse-gateway.ts";
import { exchange, head } from "./helpers/raw-http.ts";

const CAP = 20;
let gw: AbuseGateway;
beforeAll(async () => {
  gw = await startAbuseGateway({ max_connections: CAP });
}, 30_000);
afterAll(async () => {
  await gw?.close();
});

/**
 * Bounds on when the server closes a held connection, from when it was opened: its timeout, plus Node's 1 s check
 * of header and request deadlines (or the 1 s it adds to keep-alive), plus the 1 s a 408 gets before the socket is
 * destroyed, plus 2 s for a loaded machine.
 */
const HEADERS_BOUND = ABUSE_SERVER.headers_timeout_ms + 4000;
const REQUEST_BOUND = ABUSE_SERVER.request_timeout_ms + 4000;
const KEEP_ALIVE_BOUND = ABUSE_SERVER.keep_alive_timeout_ms + 4000;

interface Held {
  /** Resolves with ms from connect to the server closing it (or -1 when the test gave up at 20 s). */
  closedAfter: Promise<number>;
}

/** A connection that reads everything it is sent and does what `act` does with it. */
function hold(act: (s: Socket) => void): Held {
  const s = connect(gw.port, "127.0.0.1");
  const opened = performance.now();
  s.on("error", () => {});
  s.on("data", () => {});
  const giveUp = setTimeout(() => s.destroy(new Error("held 20 s")), 20_000);
  s.once("connect", () => act(s));
  return {
    closedAfter: new Promise((resolve) => s.once("close", (hadError) => {
      clearTimeout(giveUp);
      resolve(hadError && s.errored?.message === "held 20 s" ? -1 : Math.round(performance.now() - opened));
    })),
  };
}

/** One byte of `text` every 100 ms, for as long as the connection lasts. */
function drip(s: Socket, text: string): void {
  let i = 0;
  const t = setInterval(() => {
    if (s.destroyed || i >= text.length) return clearInterval(t);
    s.write(text[i++]!);
  }, 100);
  s.once("close", () => clearInterval(t));
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(gw.metricsUrl)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
}

/** Until the gateway holds `n` client connections (its own gauge), at most 5 s. */
async function untilOpen(n: number): Promise<void> {
  for (let i = 0; i < 100 && (await metric("gateway_connections_open")) !== n; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await metric("gateway_connections_open")).toBe(n);
}

/** GET /healthz on a connection of its own, closed after the answer. */
const healthz = () => exchange(gw.port, (w) => w.write(head("GET", "/healthz", { host: "gw", connection: "close" })).then(() => {}), { waitMs: 5000 });

/** The cap is full: one connection more is closed without a response, and counted. */
async function expectRefused(): Promise<void> {
  const before = await metric("gateway_connections_dropped_total");
  const x = await healthz();
  expect(x.responses, x.data.toString("latin1").slice(0, 200)).toHaveLength(0);
  expect(x.closed).toBe(true);
  expect(await metric("gateway_connections_dropped_total")).toBe(before + 1);
}

async function expectAnsweredAgain(): Promise<void> {
  await untilOpen(0);
  expect((await healthz()).responses[0]?.status).toBe(200);
}

describe("a connection cap of 20", () => {
  it(`connections that never send a byte fill it; each is closed within ${HEADERS_BOUND} ms (headers_timeout_ms ${ABUSE_SERVER.headers_timeout_ms})`, async () => {
    const held = Array.from({ length: CAP }, () => hold(() => {}));
    await untilOpen(CAP);
    await expectRefused();
    const after = await Promise.all(held.map((h) => h.closedAfter));
    expect(Math.min(...after), JSON.stringify(after)).toBeGreaterThan(0);
    expect(Math.max(...after), JSON.stringify(after)).toBeLessThan(HEADERS_BOUND);
    await expectAnsweredAgain();
  }, 30_000);

  it(`slow connections (headers, or a body, a byte every 100 ms) fill it; each is cut within ${REQUEST_BOUND} ms`, async () => {
    const chat = JSON.stringify({ model: MODELS.chat, messages: [{ role: "user", content: "hi" }] }).padEnd(2000, " ");
    const slowHeaders = Array.from({ length: CAP / 2 }, () => hold((s) => drip(s, head("POST", "/api/v1/chat/completions", { host: "gw" }).slice(0, -2) + "x-pad: ".padEnd(2000, "a"))));
    const slowBodies = Array.from({ length: CAP / 2 }, () => hold((s) => {
      s.write(head("POST", "/api/v1/chat/completions", { host: "gw", authorization: `Bearer ${ABUSE_KEY}`, "content-type": "application/json", "content-length": chat.length }));
      drip(s, chat);
    }));
    await untilOpen(CAP);
    await expectRefused();
    const headersCut = await Promise.all(slowHeaders.map((h) => h.closedAfter));
    const bodiesCut = await Promise.all(slowBodies.map((h) => h.closedAfter));
    expect(Math.min(...headersCut, ...bodiesCut)).toBeGreaterThan(0);
    expect(Math.max(...headersCut), JSON.stringify(headersCut)).toBeLessThan(HEADERS_BOUND);
    expect(Math.max(...bodiesCut), JSON.stringify(bodiesCut)).toBeLessThan(REQUEST_BOUND);
    await expectAnsweredAgain();
  }, 30_000);

  it(`keep-alive connections left idle after a response fill it; each is closed within ${KEEP_ALIVE_BOUND} ms (keep_alive_timeout_ms ${ABUSE_SERVER.keep_alive_timeout_ms})`, async () => {
    const answered: Promise<void>[] = [];
    const held = Array.from({ length: CAP }, () => hold((s) => {
      answered.push(new Promise((resolve) => s.once("data", () => resolve())));
      s.write(head("GET", "/healthz", { host: "gw" })); // HTTP/1.1: keep-alive
    }));
    await untilOpen(CAP);
    await Promise.all(answered);
    await expectRefused();
    const after = await Promise.all(held.map((h) => h.closedAfter));
    expect(Math.min(...after), JSON.stringify(after)).toBeGreaterThan(0);
    expect(Math.max(...after), JSON.stringify(after)).toBeLessThan(KEEP_ALIVE_BOUND);
    await expectAnsweredAgain();
  }, 30_000);
});
