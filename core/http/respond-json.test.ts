// A JSON answer (and an error envelope) leaves in one write: status line, headers with its length, body — not a
// chunked body, a terminating chunk and an empty write gathered into a writev — and the connection stays usable.
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { writeError, writeResponse, writeWhole } from "./respond.ts";
import { closeServer, countFlushes } from "./respond.testkit.ts";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";

const jsonCtx = (body: unknown): GatewayContext => ({
  requestId: "req_test", generationId: "gen_test", protocol: "openai", responseHeaders: {}, attempts: [], startedAt: performance.now(),
  signal: new AbortController().signal, response: { kind: "json", status: 200, body },
} as unknown as GatewayContext);

let server: Server | undefined;
afterEach(() => closeServer(server));

async function serve(answer: (res: ServerResponse) => void): Promise<{ port: number; flushes: string[] }> {
  server = createServer((_req, res) => answer(res));
  const flushes = countFlushes(server);
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  return { port: (server.address() as AddressInfo).port, flushes };
}

/** Sends the requests one after another on one connection; resolves with the raw bytes once `answers` responses ended. */
function exchange(port: number, requests: string[], ends: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let got = "";
    let sent = 0;
    const next = () => socket.write(requests[sent++]!);
    socket.on("connect", next);
    socket.on("data", (d) => {
      got += d.toString("utf8");
      const done = got.match(new RegExp(ends, "g"))?.length ?? 0;
      if (done === requests.length) {
        socket.end();
        resolve(got);
      } else if (done === sent) next();
    });
    socket.on("error", reject);
    setTimeout(() => reject(new Error(`no complete answers after 5 s: ${JSON.stringify(got)}`)), 5000).unref();
  });
}

const POST = "POST /v1/x HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n";

describe("JSON answers in one write", () => {
  it("writeResponse: status line, headers with the body's byte length, and the body in one flush; the next request on the connection is answered", async () => {
    const body = { text: "héllo – ünïcode", n: 1 };
    const text = JSON.stringify(body);
    const { port, flushes } = await serve((res) => void writeResponse(jsonCtx(body), res, { firstByte() {} }));
    const raw = await exchange(port, [POST, POST], /\{"text":[^}]*\}/);
    expect(flushes).toHaveLength(2); // one per response
    for (const f of flushes) {
      expect(f).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(f.toLowerCase()).not.toContain("transfer-encoding");
      expect(f).toContain(`content-length: ${Buffer.byteLength(text)}\r\n`);
      expect(f.endsWith(`\r\n\r\n${text}`)).toBe(true);
    }
    expect(raw).toBe(flushes.join(""));
  });

  it("writeError: the error envelope the same way, with its own headers", async () => {
    const err = new GatewayError(429, "RATE_LIMITED", "slow down", { retryAfter: 2 });
    const { port, flushes } = await serve((res) => writeError(jsonCtx({}), res, err, { firstByte() {} }));
    await exchange(port, [POST, POST], /"message":"slow down"[^\n]*\}\}/);
    expect(flushes).toHaveLength(2);
    expect(flushes[0]).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(flushes[0]).toContain("retry-after: 2\r\n");
    const sent = flushes[0]!.slice(flushes[0]!.indexOf("\r\n\r\n") + 4);
    expect(flushes[0]).toContain(`content-length: ${Buffer.byteLength(sent)}\r\n`);
    expect(JSON.parse(sent).error).toMatchObject({ code: "RATE_LIMITED", message: "slow down" });
  });

  it("a HEAD request gets the headers and no body, and the connection goes on", async () => {
    const { port } = await serve((res) => writeWhole(res, 200, { "content-type": "application/json" }, '{"a":1}'));
    const raw = await exchange(port, ["HEAD /v1/x HTTP/1.1\r\nHost: t\r\n\r\n", POST], /(\r\n\r\n(?!\{)|\{"a":1\})/);
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"a":1\}$/);
  });
});
