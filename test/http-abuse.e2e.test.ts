// HTTP-level abuse against the gateway as a separate process (issue 10, "no request can kill the process"): the
// shipped shape (SQLite, full default pipeline, a live key) with short `server:` timeouts, driven over raw
// sockets. Every case gets an answer or a closed socket, nothing invalid reaches an upstream, and afterwards the
// same process (same pid) answers a valid request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABUSE_KEY, MODELS, alive, startAbuseGateway, validChat, type AbuseGateway } from "./helpers/abuse-gateway.ts";
import { exchange, head, type Exchange, type RawResponse } from "./helpers/raw-http.ts";

let gw: AbuseGateway;
beforeAll(async () => {
  gw = await startAbuseGateway();
}, 30_000);
afterAll(async () => {
  await gw?.close();
});

const CHAT = "/api/v1/chat/completions";
const MESSAGES = "/api/v1/messages";
const auth = { authorization: `Bearer ${ABUSE_KEY}`, "content-type": "application/json" };
/** One POST; `connection: close` (unless overridden) so the exchange ends when the answer is complete. */
const post = (path: string, body: string | Buffer, extra: Record<string, string> = {}) =>
  Buffer.concat([Buffer.from(head("POST", path, { host: "gw", ...auth, "content-length": Buffer.byteLength(body), connection: "close", ...extra })), Buffer.from(body)]);
/** Waiting only bounds a server that never answers: every exchange below ends when the server closes. */
const WAIT = 10_000;
const validChatBody = JSON.stringify({ model: MODELS.chat, messages: [{ role: "user", content: "hi" }], max_tokens: 8 });

/** The spec's envelope (or Anthropic's shape on /messages) with an X-Request-Id. */
function expectEnvelope(r: RawResponse | undefined, status: number | RegExp, code?: string) {
  expect(r, "a response").toBeDefined();
  if (typeof status === "number") expect(r!.status).toBe(status);
  else expect(String(r!.status)).toMatch(status);
  expect(r!.headers["x-request-id"]).toMatch(/\S/);
  expect(r!.json?.error, r!.body).toMatchObject({ code: code ?? expect.any(String), message: expect.any(String) });
}

/** One request per connection: a single enveloped 4xx, or the connection closed without a word. */
function answeredOrClosed(x: Exchange, status?: number) {
  if (x.responses.length === 0) {
    expect(x.closed, `neither answered nor closed: ${x.data.toString("latin1").slice(0, 200)}`).toBe(true);
    return;
  }
  expectEnvelope(x.responses[0], status ?? /^4\d\d$/);
}

async function withNoUpstreamCall<T>(fn: () => Promise<T>): Promise<T> {
  const before = gw.upstreamCalls();
  const out = await fn();
  expect(gw.upstreamCalls() - before, "upstream calls").toBe(0);
  return out;
}

describe("HTTP abuse", () => {
  it("a 50 MiB chunked body gets its 413 and the process stays up", async () => {
    const x = await withNoUpstreamCall(() =>
      exchange(gw.port, async (w) => {
        await w.write(head("POST", CHAT, { host: "gw", ...auth, "transfer-encoding": "chunked" }));
        const chunk = Buffer.alloc(64 * 1024, "a");
        const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
        for (let sent = 0; sent < 50 * 1024 * 1024; sent += chunk.length) if (!(await w.write(frame))) return;
        await w.write("0\r\n\r\n");
      }, { waitMs: WAIT }),
    );
    expectEnvelope(x.responses[0], 413, "PAYLOAD_TOO_LARGE");
    expect(x.responses[0]!.headers.connection).toBe("close");
    expect(alive(gw)).toBe(true);
    expect((await validChat(gw)).status).toBe(200);
  });

  it.each([
    ["a chunk size that is not hex", "zz\r\nabc\r\n0\r\n\r\n"],
    ["a chunk longer than its size", "3\r\n{\"model\":1}\r\n0\r\n\r\n"],
    ["no CRLF after the chunk", "5\r\n{\"a\":1}XX0\r\n\r\n"],
    ["a chunk size past 2^64", `${"f".repeat(40)}\r\n{}\r\n0\r\n\r\n`],
  ])("malformed chunked framing (%s): 400 or closed", async (_name, body) => {
    const x = await withNoUpstreamCall(() =>
      exchange(gw.port, async (w) => {
        await w.write(head("POST", CHAT, { host: "gw", ...auth, "transfer-encoding": "chunked" }) + body);
      }, { waitMs: WAIT }),
    );
    answeredOrClosed(x, 400);
    expect(x.closed).toBe(true);
  });

  it("Content-Length and Transfer-Encoding together are refused (request smuggling)", async () => {
    const x = await withNoUpstreamCall(() =>
      exchange(gw.port, async (w) => {
        await w.write(head("POST", CHAT, { host: "gw", ...auth, "content-length": 4, "transfer-encoding": "chunked" }) + `${Buffer.byteLength(validChatBody).toString(16)}\r\n${validChatBody}\r\n0\r\n\r\n`);
      }, { waitMs: WAIT }),
    );
    answeredOrClosed(x, 400);
  });

  it("a body longer than its Content-Length: the declared bytes are the body, the rest is refused as a request", async () => {
    const body = validChatBody;
    const x = await withNoUpstreamCall(() =>
      exchange(gw.port, async (w) => {
        await w.write(head("POST", CHAT, { host: "gw", ...auth, "content-length": 20 }) + body);
      }, { waitMs: WAIT }),
    );
    expectEnvelope(x.responses[0], 400, "INVALID_REQUEST"); // 20 bytes of JSON are not JSON
    expect(x.responses[0]!.json.error.message).toMatch(/not valid JSON/);
    // The leftover bytes are no HTTP request: after the first request's own answer, a 400 for them, then close.
    expect(x.responses).toHaveLength(2);
    expectEnvelope(x.responses[1], 400, "INVALID_REQUEST");
    expect(x.responses[1]!.json.error.message).toMatch(/Malformed HTTP request/);
    expect(x.closed).toBe(true);
  });

  it("a body shorter than its Content-Length: closed by the request timeout (408) or when the client gives up", async () => {
    const [held, ended] = await withNoUpstreamCall(() =>
      Promise.all([
        exchange(gw.port, async (w) => {
          await w.write(head("POST", CHAT, { host: "gw", ...auth, "content-length": 500 }) + validChatBody);
        }, { waitMs: 15_000 }),
        exchange(gw.port, async (w) => {
          await w.write(head("POST", CHAT, { host: "gw", ...auth, "content-length": 500 }) + validChatBody);
          w.socket.end();
        }, { waitMs: 15_000 }),
      ]),
    );
    expect(held.closed, "the server ends a request that never completes").toBe(true);
    answeredOrClosed(held, 408);
    expect(ended.closed).toBe(true);
    answeredOrClosed(ended);
  });

  it("slowloris: headers one byte at a time are cut off by headers_timeout_ms, a body one byte at a time by request_timeout_ms", async () => {
    const drip = (text: string, w: Parameters<Parameters<typeof exchange>[1]>[0]) => (async () => {
      for (let i = 0; i < text.length; i++) {
        if (!(await w.write(text[i]!))) return;
        if (!(await w.pause(100))) return;
      }
    })();
    const [headers, body] = await withNoUpstreamCall(() =>
      Promise.all([
        // Never-ending headers: 20 s of dripping unless the server hangs up first.
        exchange(gw.port, (w) => drip(head("POST", CHAT, { host: "gw", ...auth }).slice(0, -2) + "x-pad: ".padEnd(150, "a"), w), { waitMs: 1000 }),
        exchange(gw.port, async (w) => {
          await w.write(head("POST", CHAT, { host: "gw", ...auth, "content-length": 200 }));
          await drip(validChatBody.padEnd(200, " "), w);
        }, { waitMs: 1000 }),
      ]),
    );
    expect(headers.closed, "headers drip closed by the server").toBe(true);
    answeredOrClosed(headers, 408);
    expect(body.closed, "body drip closed by the server").toBe(true);
    answeredOrClosed(body, 408);
  }, 40_000);

  it("a path that is not valid percent-encoding: the gateway's 400 envelope, not the framework's bare body", async () => {
    for (const path of ["/api/v1/models/%", "/api/v1/chat/completions%", "/%C3%28"]) {
      const x = await exchange(gw.port, (w) => w.write(head("GET", path, { host: "gw", ...auth, connection: "close" })).then(() => {}), { waitMs: WAIT });
      expectEnvelope(x.responses[0], 400, "INVALID_REQUEST");
      expect(x.responses[0]!.json.error.message).toContain("not valid percent-encoding");
    }
    // Under /admin/v1 the admin key is checked first: a project key is refused there whatever the path.
    const admin = await exchange(gw.port, (w) => w.write(head("GET", "/admin/v1/%zz", { host: "gw", ...auth, connection: "close" })).then(() => {}), { waitMs: WAIT });
    expectEnvelope(admin.responses[0], 401, "INVALID_API_KEY");
  });

  it("an Expect other than 100-continue: 417 in the envelope (Node's own has no body), and nothing reaches an upstream", async () => {
    const x = await withNoUpstreamCall(() => exchange(gw.port, (w) => w.write(post(CHAT, validChatBody, { expect: "something-else" })).then(() => {}), { waitMs: WAIT }));
    expectEnvelope(x.responses[0], 417, "INVALID_REQUEST");
    expect(x.responses[0]!.json.error.message).toContain("only 100-continue");
  });

  it("thousands of headers: 431", async () => {
    const many: Record<string, string> = { host: "gw", ...auth };
    for (let i = 0; i < 5000; i++) many[`x-h${i}`] = "v";
    const x = await withNoUpstreamCall(() => exchange(gw.port, (w) => w.write(head("POST", CHAT, { ...many, "content-length": 2 }) + "{}").then(() => {}), { waitMs: WAIT }));
    expectEnvelope(x.responses[0], 431, "INVALID_REQUEST");
    expect(x.closed).toBe(true);
  });

  it("a header block too large on the Messages and Gemini routes: 431 in their own envelopes, as curl sends it", async () => {
    const big = (path: string, extra: Record<string, string>) =>
      exchange(gw.port, (w) => w.write(head("POST", path, { host: "gw", ...auth, ...extra, "x-big": "a".repeat(20_000), "content-length": 2 }) + "{}").then(() => {}), { waitMs: WAIT });
    const messages = (await withNoUpstreamCall(() => big(MESSAGES, { "anthropic-version": "2023-06-01" }))).responses[0];
    expectEnvelope(messages, 431, "INVALID_REQUEST");
    expect(messages!.json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(messages!.headers["request-id"]).toBe(messages!.headers["x-request-id"]);
    const gemini = (await withNoUpstreamCall(() => big(`/api/v1beta/models/${MODELS.chat}:generateContent`, {}))).responses[0];
    expect(gemini!.status).toBe(431);
    expect(gemini!.json.error).toMatchObject({ code: 431, status: "INVALID_ARGUMENT", message: "Request header fields too large" });
  });

  it("deeply nested JSON (100k levels), as the body and inside a field: 400", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    for (const [path, body] of [
      [CHAT, deep],
      [CHAT, `{"model":"${MODELS.chat}","messages":[{"role":"user","content":"hi"}],"metadata":${deep}}`],
      [MESSAGES, `{"model":"${MODELS.messages}","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","extra":${"{\"a\":".repeat(50_000)}1${"}".repeat(50_000)}}]}]}`],
    ] as const) {
      const x = await withNoUpstreamCall(() => exchange(gw.port, (w) => w.write(post(path, body)).then(() => {}), { waitMs: WAIT }));
      expectEnvelope(x.responses[0], 400, "INVALID_REQUEST");
      if (path === MESSAGES) expect(x.responses[0]!.json.type).toBe("error");
    }
  });

  it("huge numbers: 1e999 and a 100-digit max_tokens are 400 naming max_tokens", async () => {
    for (const n of ["1e999", "-1e999", "9".repeat(100), "1" + "0".repeat(400)]) {
      const x = await withNoUpstreamCall(() =>
        exchange(gw.port, (w) => w.write(post(CHAT, `{"model":"${MODELS.chat}","messages":[{"role":"user","content":"hi"}],"max_tokens":${n}}`)).then(() => {}), { waitMs: WAIT }),
      );
      expectEnvelope(x.responses[0], 400, "INVALID_REQUEST");
      expect(x.responses[0]!.json.error.details.field).toBe("max_tokens");
    }
  });

  it("invalid UTF-8 in the body: 400", async () => {
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80] /* a UTF-16 surrogate */, [0xf4, 0x90, 0x80, 0x80] /* past U+10FFFF */]) {
      const body = Buffer.concat([Buffer.from(`{"model":"${MODELS.chat}","messages":[{"role":"user","content":"a`), Buffer.from(bad), Buffer.from(`"}]}`)]);
      const x = await withNoUpstreamCall(() => exchange(gw.port, (w) => w.write(post(CHAT, body)).then(() => {}), { waitMs: WAIT }));
      expectEnvelope(x.responses[0], 400, "INVALID_REQUEST");
      expect(x.responses[0]!.json.error.message).toMatch(/UTF-8/);
    }
  });

  it("pipelined requests on one socket are all answered, in order", async () => {
    const before = gw.upstreamCalls();
    const reqs = [
      post(CHAT, "{", { "x-request-id": "pipe-1", connection: "keep-alive" }),
      Buffer.from(head("GET", "/healthz", { host: "gw", "x-request-id": "pipe-2" })),
      post(MESSAGES, JSON.stringify({ model: MODELS.messages, max_tokens: 5, messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] }), { "x-request-id": "pipe-3", connection: "keep-alive" }),
      Buffer.from(head("GET", "/api/v1/models", { host: "gw", authorization: `Bearer ${ABUSE_KEY}`, "x-request-id": "pipe-4" })),
      post(CHAT, validChatBody, { "x-request-id": "pipe-5", connection: "keep-alive" }),
      post(CHAT, JSON.stringify({ model: MODELS.chat, messages: "nope" }), { "x-request-id": "pipe-6", connection: "close" }),
    ];
    const x = await exchange(gw.port, (w) => w.write(Buffer.concat(reqs)).then(() => {}), { waitMs: WAIT });
    expect(x.responses.map((r) => r.status)).toEqual([400, 200, 400, 200, 200, 400]);
    expect(x.responses.filter((r) => r.json?.error).map((r) => r.headers["x-request-id"])).toEqual(["pipe-1", "pipe-3", "pipe-6"]);
    expect(x.responses[2]!.json.error.details.field).toBe("messages[0].content[0].text");
    expect(x.responses[4]!.json.choices[0].message.content).toEqual(expect.any(String));
    expect(gw.upstreamCalls() - before).toBe(1); // the one valid completion
    expect(x.closed).toBe(true); // connection: close on the last
  });

  it.each([
    ["garbage bytes", Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a])],
    ["a request line without a version", Buffer.from("POST /api/v1/chat/completions\r\n\r\n")],
    ["an unknown method token with spaces", Buffer.from("P O S T / HTTP/1.1\r\nhost: gw\r\n\r\n")],
    ["a control character in the path", Buffer.from("GET /api/v1/\x7fmodels HTTP/1.1\r\nhost: gw\r\n\r\n")],
    ["HTTP/9.9", Buffer.from("GET / HTTP/9.9\r\nhost: gw\r\n\r\n")],
    ["a header without a colon", Buffer.from("GET /healthz HTTP/1.1\r\nhost gw\r\n\r\n")],
    ["a TLS ClientHello", Buffer.from("16030100a5010000a10303", "hex")],
  ])("a request line with %s: 400 or closed", async (_name, bytes) => {
    const x = await withNoUpstreamCall(() => exchange(gw.port, (w) => w.write(bytes).then(() => {}), { waitMs: WAIT }));
    answeredOrClosed(x);
    expect(x.closed).toBe(true);
  });

  it("a stream asked for with Connection: close says so and ends the connection after its last event; a request pipelined behind it is not answered (RFC 9112 §9.6)", async () => {
    // Before: the stream's headers said `connection: keep-alive`, the socket stayed open for keep_alive_timeout_ms
    // after [DONE], and the pipelined request got an answer.
    const stream = JSON.stringify({ model: MODELS.chat, messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream: true });
    const x = await exchange(gw.port, (w) => w.write(Buffer.concat([post(CHAT, stream), Buffer.from(head("GET", "/healthz", { host: "gw" }))])).then(() => {}), { waitMs: WAIT });
    expect(x.responses.map((r) => r.status)).toEqual([200]);
    expect(x.responses[0]!.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(x.responses[0]!.headers.connection).toBe("close");
    expect(x.responses[0]!.body).toContain("data: [DONE]");
    expect(x.closed).toBe(true);
  });

  it("a stream keeps the connection open for the next request when the client did not ask to close it", async () => {
    const stream = JSON.stringify({ model: MODELS.chat, messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream: true });
    const x = await exchange(gw.port, (w) => w.write(Buffer.concat([post(CHAT, stream, { connection: "keep-alive" }), Buffer.from(head("GET", "/healthz", { host: "gw", connection: "close" }))])).then(() => {}), { waitMs: WAIT });
    expect(x.responses.map((r) => r.status)).toEqual([200, 200]);
    expect(x.responses[0]!.headers.connection).toBe("keep-alive");
    expect(x.responses[0]!.body).toContain("data: [DONE]");
  });

  it("an HTTP/1.0 stream: the events, then the connection closes to end the body (no chunked framing)", async () => {
    const stream = JSON.stringify({ model: MODELS.chat, messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream: true });
    const x = await exchange(gw.port, (w) => w.write(Buffer.concat([Buffer.from(head("POST", CHAT, { host: "gw", ...auth, "content-length": Buffer.byteLength(stream) }).replace("HTTP/1.1", "HTTP/1.0")), Buffer.from(stream)])).then(() => {}), { waitMs: WAIT });
    const r = x.responses[0];
    expect(r?.status, x.data.toString("latin1").slice(0, 300)).toBe(200);
    expect(r!.headers["transfer-encoding"]).toBeUndefined();
    expect(r!.headers.connection).toBe("close");
    expect(r!.body).toMatch(/^data: \{/);
    expect(r!.body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(x.closed).toBe(true);
  });

  it("Content-Encoding: a gzip or br chat body is answered; a gzip bomb is 413 and a coding it cannot decode 415 with the codings it takes, neither reaching an upstream", async () => {
    // Before: gzip was "not valid JSON", br "not valid UTF-8", a plain body labelled gzip was accepted; the 415 had no
    // Accept-Encoding (RFC 9110 §15.5.16).
    const zlib = await import("node:zlib");
    for (const [encoding, bytes] of [["gzip", zlib.gzipSync(validChatBody)], ["br", zlib.brotliCompressSync(validChatBody)]] as const) {
      const x = await exchange(gw.port, (w) => w.write(post(CHAT, bytes, { "content-encoding": encoding })).then(() => {}), { waitMs: WAIT });
      expect(x.responses[0]?.status, `${encoding}: ${x.responses[0]?.body.slice(0, 300)}`).toBe(200);
      expect(x.responses[0]!.json.choices[0].message.content).toEqual(expect.any(String));
    }
    const bomb = zlib.gzipSync(Buffer.from(`{"model":"${MODELS.chat}","messages":[{"role":"user","content":"${"0".repeat(64 * 1024 * 1024)}"}]}`));
    const refused = await withNoUpstreamCall(() => Promise.all([
      exchange(gw.port, (w) => w.write(post(CHAT, bomb, { "content-encoding": "gzip" })).then(() => {}), { waitMs: WAIT }),
      exchange(gw.port, (w) => w.write(post(CHAT, validChatBody, { "content-encoding": "zstd" })).then(() => {}), { waitMs: WAIT }),
    ]));
    expectEnvelope(refused[0].responses[0], 413, "PAYLOAD_TOO_LARGE");
    expectEnvelope(refused[1].responses[0], 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(refused[1].responses[0]!.headers["accept-encoding"]).toBe("gzip, deflate, br");
    expect(alive(gw)).toBe(true);
  });

  it("Content-Encoding: a chunked deflate body of 12 MiB of empty blocks before a small chat request is 413 naming max_body_bytes, not answered", async () => {
    // Before: the limit counted decoded bytes only, and empty stored blocks decode to nothing (1 000 MB sent: 200).
    const zlib = await import("node:zlib");
    const zlibbed = zlib.deflateSync(validChatBody);
    const empty = Buffer.from(Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]).toString("latin1").repeat(64 * 1024 / 5), "latin1");
    const frame = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from("\r\n")]);
    const x = await withNoUpstreamCall(() =>
      exchange(gw.port, async (w) => {
        await w.write(head("POST", CHAT, { host: "gw", ...auth, "content-encoding": "deflate", "transfer-encoding": "chunked", connection: "close" }));
        await w.write(frame(zlibbed.subarray(0, 2)));
        for (let sent = 0; sent < 12 * 1024 * 1024; sent += empty.length) if (!(await w.write(frame(empty)))) return;
        await w.write(Buffer.concat([frame(zlibbed.subarray(2)), Buffer.from("0\r\n\r\n")]));
      }, { waitMs: WAIT }),
    );
    expectEnvelope(x.responses[0], 413, "PAYLOAD_TOO_LARGE");
    expect(x.responses[0]!.json.error.message).toContain("server.max_body_bytes");
    expect(alive(gw)).toBe(true);
  });

  it("afterwards the same process answers a valid request", async () => {
    expect(alive(gw)).toBe(true);
    const res = await validChat(gw);
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.role).toBe("assistant");
    expect(res.upstreamDelta).toBe(1);
    expect(gw.output()).not.toMatch(/uncaught|unhandled|TypeError|RangeError/i);
  });
});
