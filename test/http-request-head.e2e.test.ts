// Request heads Node's parser accepts but the gateway refuses itself, over raw sockets: an HTTP/1.1 request without
// Host (an old-style HAProxy `option httpchk`) and one with more header lines than the gateway takes get the path's
// error envelope with an X-Request-Id and an access line, as every other refusal does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { exchange, head, type RawResponse } from "./helpers/raw-http.ts";
import type { RunningGateway } from "../core/server.ts";
import { MAX_HEADER_LINES } from "../core/http/request-head.ts";

const SANDBOX = testKey("request-head-sb", true);
let gw: RunningGateway;
let log: CapturedLog;

beforeAll(async () => {
  ({ gw, log } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: "http://127.0.0.1:9", api_key: "sk-never-called" } },
    models: {
      "test/m": { type: "language", endpoints: [{ provider: "up", model: "m" }] },
      "test/e": { type: "embedding", endpoints: [{ provider: "up", model: "e" }] },
    },
    projects: { p: { keys: [keyEntry("sb", SANDBOX)] } },
  }));
});
afterAll(async () => {
  await gw?.close();
});

/** Sends `raw` on a fresh connection; the one answer the server gives before it closes. */
async function send(raw: string | Buffer): Promise<RawResponse> {
  const x = await exchange(gw.port, async (w) => void (await w.write(raw)), { waitMs: 10_000 });
  expect(x.responses, x.data.toString("latin1").slice(0, 300)).toHaveLength(1);
  return x.responses[0]!;
}

const accessLineOf = async (requestId: string) => (await log.accessOnce((l) => l.requestId === requestId, 1))[0];

describe("an HTTP/1.1 request without Host", () => {
  it("GET /readyz: 400 in the spec's envelope naming Host, with x-request-id and an access line", async () => {
    const r = await send("GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: expect.stringMatching(/Host header is required/), type: "invalid_request_error" } });
    const id = r.headers["x-request-id"]!;
    expect(id).toMatch(/\S/);
    expect(await accessLineOf(id)).toMatchObject({ path: "/readyz", status: 400, errorCode: "INVALID_REQUEST" });
  });

  it("on a Messages path: Anthropic's envelope with request-id", async () => {
    const body = JSON.stringify({ model: "test/m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    const r = await send(`POST /api/v1/messages HTTP/1.1\r\nx-api-key: ${SANDBOX}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringMatching(/Host header is required/) } });
    expect(r.headers["request-id"]).toBe(r.headers["x-request-id"]);
    expect(r.headers.connection).toBe("close");
  });

  it("HTTP/1.0 without Host is still served", async () => {
    const r = await send("GET /readyz HTTP/1.0\r\n\r\n");
    expect(r.status).toBe(200);
  });
});

describe("a request with two Host lines", () => {
  it("400 in the envelope naming Host, not served under the first one", async () => {
    const r = await send("GET /readyz HTTP/1.1\r\nHost: gw\r\nHost: other.example\r\nConnection: close\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: "The Host header appears 2 times; a request carries exactly one" } });
    expect(r.headers.connection).toBe("close");
    expect(await accessLineOf(r.headers["x-request-id"]!)).toMatchObject({ status: 400, errorCode: "INVALID_REQUEST" });
  });

  it("on an HTTP/1.0 request too", async () => {
    const r = await send("GET /readyz HTTP/1.0\r\nhost: gw\r\nHOST: gw\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/Host header appears 2 times/);
  });
});

describe("an Expect other than 100-continue on a head refused anyway", () => {
  it("without Host: the missing Host's 400, not the 417", async () => {
    const r = await send("GET /readyz HTTP/1.1\r\nExpect: something-else\r\nConnection: close\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/Host header is required/);
  });

  it("with Host: still the 417", async () => {
    const r = await send("GET /readyz HTTP/1.1\r\nHost: gw\r\nExpect: something-else\r\nConnection: close\r\n\r\n");
    expect(r.status).toBe(417);
  });
});

describe("header lines", () => {
  const chat = JSON.stringify({ model: "test/m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
  /** A chat request whose head has `filler` lines `a: ` before the headers that matter (5 of them). */
  const withFiller = (filler: number) =>
    `POST /api/v1/chat/completions HTTP/1.1\r\n${"a: \r\n".repeat(filler)}host: gw\r\nauthorization: Bearer ${SANDBOX}\r\n` +
    `content-type: application/json\r\ncontent-length: ${chat.length}\r\nconnection: close\r\n\r\n${chat}`;

  it("3000 lines in a 15 KB head: 431 naming the count, not a refusal blaming Content-Type", async () => {
    const raw = withFiller(2995);
    expect(raw.length).toBeLessThan(16_384);
    const r = await send(raw);
    expect(r.status).toBe(431);
    expect(r.json).toMatchObject({ error: { code: "INVALID_REQUEST", message: `Request has 3000 header lines; at most ${MAX_HEADER_LINES} are accepted` } });
    const id = r.headers["x-request-id"]!;
    expect(id).toMatch(/\S/);
    expect(await accessLineOf(id)).toMatchObject({ status: 431 });
  });

  it(`${MAX_HEADER_LINES} lines are served, the last ones read`, async () => {
    const r = await send(withFiller(MAX_HEADER_LINES - 5));
    expect(r.status, r.body).toBe(200);
    expect(r.json.choices[0].message.content).toEqual(expect.any(String));
  });
});
