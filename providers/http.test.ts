import { describe, expect, it } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { failFromResponse, readUpstreamJson, retryAfterSeconds, transportError, upstreamError, UpstreamClient } from "./http.ts";
import { GatewayError } from "../core/errors.ts";
import { isRetryable } from "../core/dispatch.ts";
import { parseSse } from "../core/sse/parse.ts";
import type { UpstreamLimitsConfig } from "../core/generated/types/gateway.ts";

describe("upstreamError", () => {
  it("maps 5xx and 429 to a retryable 502 carrying the provider's message and Retry-After", () => {
    const e = upstreamError("openai", 429, { "retry-after": "7" }, '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}');
    expect(e).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, retryAfter: 7 });
    expect(e.message).toContain("Rate limit reached");
    expect(e.details).toMatchObject({ provider: "openai", upstream_status: 429, upstream_error: { code: "rate_limit_exceeded" } });
  });

  it("maps 408 and 504 to UPSTREAM_TIMEOUT, and the provider's own 401/403 to a non-retryable 502", () => {
    expect(upstreamError("p", 504, {}, "gateway timeout")).toMatchObject({ status: 504, code: "UPSTREAM_TIMEOUT", retryable: true });
    const denied = upstreamError("p", 401, {}, '{"error":{"message":"Incorrect API key provided"}}');
    expect(denied).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false, headers: { "x-should-retry": "false" } });
  });

  it("maps the provider's request errors (400, 413, 422, 404 naming what the client named) to a non-retryable 400 INVALID_REQUEST", () => {
    const body = '{"error":{"message":"This model\'s maximum context length is 128000 tokens","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}';
    const e = upstreamError("openai", 400, {}, body);
    expect(e).toMatchObject({ status: 400, code: "INVALID_REQUEST", retryable: false, headers: { "x-should-retry": "false" } });
    expect(e.message).toContain("maximum context length");
    expect(e.details).toMatchObject({ provider: "openai", upstream_status: 400, field: "messages", upstream_error: { code: "context_length_exceeded" } });
    for (const status of [413, 422]) expect(upstreamError("p", status, {}, '{"error":{"message":"too big"}}').status).toBe(400);
    // A 404 about something the client named (a file, a stored response) is still the request's fault.
    const file404 = '{"error":{"message":"No such File object: file-abc123","type":"invalid_request_error","param":"file_id","code":null}}';
    expect(upstreamError("openai", 404, {}, file404)).toMatchObject({ status: 400, code: "INVALID_REQUEST", details: { field: "file_id" } });
    const anthropicFile404 = '{"type":"error","error":{"type":"not_found_error","message":"File not found: file_011CNha8iCJcU1wXNR6q4V8w"}}';
    expect(upstreamError("anthropic", 404, {}, anthropicFile404)).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
    // A 404 that is the gateway's own misconfiguration (wrong base_url) stays a server-side error.
    expect(upstreamError("p", 404, {}, "<html>Not Found</html>")).toMatchObject({ status: 502, code: "UPSTREAM_ERROR" });
    expect(upstreamError("p", 404, {}, '{"error":{"message":"Unknown request URL","code":"unknown_url"}}').status).toBe(502);
  });

  it("a 404 about the endpoint's own model or deployment is the configuration's: a 502 not retried (dispatch moves on to the next endpoint)", () => {
    const bodies: [string, string][] = [
      ["azure", '{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}'],
      ["azure", '{"error":{"code":"404","message":"Resource not found"}}'],
      ["openai", '{"error":{"message":"The model `gpt-nope` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}'],
      ["anthropic", '{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}'],
      ["gemini", '{"error":{"code":404,"message":"models/gemini-nope is not found for API version v1beta, or is not supported for generateContent.","status":"NOT_FOUND"}}'],
      ["vertex", '{"error":{"code":404,"message":"Publisher Model `projects/p/locations/us-central1/publishers/google/models/gemini-nope` was not found or your project does not have access to it.","status":"NOT_FOUND"}}'],
    ];
    for (const [provider, body] of bodies) {
      const e = upstreamError(provider, 404, {}, body);
      expect(e, body).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false, details: { reason: "upstream_not_found", upstream_status: 404 } });
      expect(e.headers?.["x-should-retry"], body).toBe("false");
      expect(isRetryable(e), body).toBe(false);
    }
  });

  it("OpenAI's 429 insufficient_quota (account out of credit) is no rate limit: not retried, x-should-retry: false, no Retry-After", () => {
    const body = '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}';
    const e = upstreamError("openai", 429, { "retry-after": "20" }, body);
    expect(e).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false, retryAfter: undefined, headers: { "x-should-retry": "false" }, details: { reason: "out_of_credit", upstream_status: 429 } });
    expect(e.message).toContain("You exceeded your current quota");
    expect(isRetryable(e)).toBe(false);
    // A rate limit stays one.
    const limited = upstreamError("openai", 429, {}, '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}');
    expect([limited.retryable, limited.details?.reason, isRetryable(limited)]).toEqual([true, undefined, true]);
  });

  it("Google's 400 for the gateway's setup (an invalid API key, a location or billing it will not serve) is the endpoint's fault, not the client's", () => {
    const badKey = JSON.stringify({ error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } }] } });
    const location = '{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}';
    const billing = '{"error":{"code":400,"message":"Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.","status":"FAILED_PRECONDITION"}}';
    for (const body of [badKey, location, billing]) {
      const e = upstreamError("gemini", 400, {}, body);
      expect(e, body).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: false, headers: { "x-should-retry": "false" }, details: { upstream_status: 400 } });
      expect(e.message, body).toContain(JSON.parse(body).error.message);
    }
    // A Google 400 about the request itself stays the client's: a bad field, or a precondition of the client's own
    // (an uploaded file still processing: waiting and asking again passes; another endpoint's key cannot see it).
    const invalid = '{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"contents"}]}]}}';
    const fileNotActive = '{"error":{"code":400,"message":"The File abc123 is not in an ACTIVE state and usage is not allowed.","status":"FAILED_PRECONDITION"}}';
    for (const body of [invalid, fileNotActive]) expect(upstreamError("gemini", 400, {}, body), body).toMatchObject({ status: 400, code: "INVALID_REQUEST" });
  });

  it("Azure's content-filter 400 stays a 400 INVALID_REQUEST, marked details.reason content_filter", () => {
    const body = JSON.stringify({ error: { code: "content_filter", message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", param: "prompt", type: null, status: 400, innererror: { code: "ResponsibleAIPolicyViolation", content_filter_result: { hate: { filtered: true, severity: "medium" } } } } });
    expect(upstreamError("azure", 400, {}, body)).toMatchObject({
      status: 400, code: "INVALID_REQUEST", retryable: false,
      details: { reason: "content_filter", field: "prompt", content_filter_result: { hate: { filtered: true, severity: "medium" } } },
    });
    expect(upstreamError("openai", 400, {}, '{"error":{"message":"bad","code":"invalid_value"}}').details?.reason).toBeUndefined();
  });

  it("dispatch retries exactly the statuses marked retryable here (a 409 was marked retryable and then not retried)", () => {
    for (const status of [401, 403, 408, 409, 418, 429, 500, 502, 504]) {
      const err = upstreamError("p", status, {}, '{"error":{"message":"x"}}');
      expect([status, isRetryable(err)]).toEqual([status, err.retryable]);
    }
  });

  it("keeps a non-JSON body as the message", () => {
    expect(upstreamError("p", 503, {}, "<html>Service Unavailable</html>").message).toContain("<html>Service Unavailable</html>");
  });
});

describe("retryAfterSeconds", () => {
  it("prefers retry-after-ms, then seconds, then an HTTP date", () => {
    expect(retryAfterSeconds({ "retry-after-ms": "1500", "retry-after": "9" })).toBe(1.5);
    expect(retryAfterSeconds({ "retry-after": "3" })).toBe(3);
    const inTwo = new Date(Date.now() + 2000).toUTCString();
    expect(retryAfterSeconds({ "retry-after": inTwo })).toBeGreaterThan(0);
    expect(retryAfterSeconds({})).toBeUndefined();
  });
});

describe("UpstreamClient.send", () => {
  /** A real HTTP server that answers with what it received: the request's framing headers and its body. */
  async function echoServer(): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ length: req.headers["content-length"] ?? null, chunked: req.headers["transfer-encoding"] ?? null, body: Buffer.concat(parts).toString("utf8") }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, close: () => new Promise((r) => server.close(() => r())) };
  }

  it("sends small and large bodies whole, with a byte content-length and no chunked framing (large ones go as a one-shot iterable)", async () => {
    const server = await echoServer();
    const client = new UpstreamClient("echo", { timeoutMs: 5000 });
    try {
      for (const text of ['{"small":"é"}', JSON.stringify({ messages: [{ role: "user", content: "long é prompt ".repeat(4000) }] })]) {
        const r = await client.send({ url: server.url, headers: { "content-type": "application/json" }, body: text }, new AbortController().signal);
        const echo = JSON.parse(await r.body.text()) as { length: string | null; chunked: string | null; body: string };
        expect(echo.body).toBe(text);
        expect(echo.length).toBe(String(Buffer.byteLength(text)));
        expect(echo.chunked).toBeNull();
      }
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("upstream answers are read within a bound (issue 25)", () => {
  /**
   * A server that writes `total` bytes of a JSON string (chunked, or with a Content-Length) and records how many it
   * got out before the gateway dropped the connection.
   */
  async function bigAnswer(total: number, opts: { status?: number; contentLength?: boolean; limits?: UpstreamLimitsConfig } = {}) {
    const seen = { written: 0, closedEarly: false };
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(opts.status ?? 200, { "content-type": "application/json", ...(opts.contentLength ? { "content-length": String(total) } : {}) });
      const piece = Buffer.alloc(64 * 1024, "a");
      piece[0] = 0x22; // a JSON string that never ends in time: the read must stop on size, not on syntax
      const pump = () => {
        while (seen.written < total) {
          seen.written += piece.length;
          if (!res.write(piece)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", () => { if (!res.writableFinished) seen.closedEarly = true; });
      pump();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = new UpstreamClient("big", { timeoutMs: 5000, limits: opts.limits });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`;
    return {
      seen,
      send: () => client.send({ url, headers: {}, body: "{}" }, new AbortController().signal),
      close: async () => {
        await client.close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  const MiB = 1024 * 1024;

  it("a JSON answer past the limit is a 502 UPSTREAM_ERROR and the connection is dropped, not read to its end", async () => {
    const up = await bigAnswer(64 * MiB, { limits: { answer_bytes: MiB } });
    try {
      const err = await readUpstreamJson("big", await up.send()).catch((e) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", details: { provider: "big", reason: "answer_too_large", limit_bytes: MiB } });
      await expect.poll(() => up.seen.closedEarly).toBe(true);
      expect(up.seen.written).toBeLessThan(32 * MiB);
    } finally {
      await up.close();
    }
  });

  it("an answer past the limit is not worth a retry: the same request would be as large, so neither dispatch nor the client retries, and the message names the bound and the setting that raises it", async () => {
    const up = await bigAnswer(4 * MiB, { limits: { answer_bytes: MiB } });
    try {
      const err: GatewayError = await readUpstreamJson("big", await up.send()).catch((e) => e);
      expect(err).toMatchObject({ retryable: false, headers: { "x-should-retry": "false" }, retryAfter: undefined, details: { setting: "server.upstream_limits.answer_bytes" } });
      expect(isRetryable(err)).toBe(false);
      expect(err.message).toBe(`Provider big sent an answer larger than ${MiB} bytes, the gateway's bound (server.upstream_limits.answer_bytes raises it); the answer was dropped`);
    } finally {
      await up.close();
    }
  });

  it("a media operation's answer is bounded by its own setting", async () => {
    const up = await bigAnswer(4 * MiB, { limits: { answer_bytes: 64 * MiB, media_answer_bytes: MiB } });
    try {
      expect(await readUpstreamJson("big", await up.send(), undefined, "media").catch((e) => e)).toMatchObject({
        status: 502, retryable: false, details: { reason: "answer_too_large", limit_bytes: MiB, setting: "server.upstream_limits.media_answer_bytes" },
      });
    } finally {
      await up.close();
    }
  });

  it("a Content-Length past the limit is refused before any of the body is read", async () => {
    const up = await bigAnswer(8 * MiB, { contentLength: true, limits: { answer_bytes: MiB } });
    try {
      await expect(readUpstreamJson("big", await up.send())).rejects.toMatchObject({ status: 502, retryable: false, details: { reason: "answer_too_large" } });
      await expect.poll(() => up.seen.closedEarly).toBe(true);
    } finally {
      await up.close();
    }
  });

  it("an answer within the limit parses as before; raising the setting admits an answer the default refuses", async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: "é".repeat(100_000) })); // 200 KB
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`;
    const read = async (limits?: UpstreamLimitsConfig) => {
      const client = new UpstreamClient("ok", { timeoutMs: 5000, limits });
      try {
        return await readUpstreamJson("ok", await client.send({ url, headers: {}, body: "{}" }, new AbortController().signal)).catch((e) => e);
      } finally {
        await client.close();
      }
    };
    try {
      expect((await read()).ok).toHaveLength(100_000);
      expect(await read({ answer_bytes: 100 * 1024 })).toMatchObject({ details: { reason: "answer_too_large", limit_bytes: 100 * 1024 } });
      expect((await read({ answer_bytes: 300 * 1024 })).ok).toHaveLength(100_000);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("a stream event past server.upstream_limits.event_chars stops the stream with a 502 not worth a retry, naming the bound and the setting", async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${"x".repeat(4096)}\n\n`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = new UpstreamClient("up", { timeoutMs: 5000, limits: { event_chars: 2048 } });
    try {
      const res = await client.send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`, headers: {}, body: "{}" }, new AbortController().signal);
      const events: string[] = [];
      const err = await (async () => {
        for await (const ev of parseSse(res.body)) events.push(ev.data);
      })().then(() => undefined, (e) => transportError("up", e));
      expect(events).toEqual([]);
      expect(err).toMatchObject({
        status: 502, code: "UPSTREAM_ERROR", retryable: false, headers: { "x-should-retry": "false" },
        details: { provider: "up", reason: "event_too_large", limit_chars: 2048, setting: "server.upstream_limits.event_chars" },
      });
      expect(err!.message).toBe("Provider up sent a stream event larger than 2048 characters, the gateway's bound (server.upstream_limits.event_chars raises it); the stream was stopped");
      expect(isRetryable(err!)).toBe(false);
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("an endless error body: its first 64 KiB make the message, the rest is never read", async () => {
    const up = await bigAnswer(256 * 1024 * 1024, { status: 503 });
    try {
      const err = await failFromResponse("big", await up.send());
      expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", details: { upstream_status: 503 } });
      expect(err.message.length).toBeLessThan(70 * 1024);
      await expect.poll(() => up.seen.closedEarly).toBe(true);
      expect(up.seen.written).toBeLessThan(128 * 1024 * 1024);
    } finally {
      await up.close();
    }
  });
});

describe("UpstreamClient.send: what the answer's headers say", () => {
  async function serve(handler: Parameters<typeof createServer>[1]) {
    const server = createServer(handler);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`,
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  it("asks for no content coding (none named lets the upstream pick any), unless the caller named one", async () => {
    const seen: (string | undefined)[] = [];
    const server = await serve((req, res) => {
      seen.push(req.headers["accept-encoding"]);
      req.resume();
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    const client = new UpstreamClient("up", { timeoutMs: 5000 });
    try {
      for (const headers of [{}, { "Accept-Encoding": "gzip" }] as Record<string, string>[]) await (await client.send({ url: server.url, headers, body: "{}" }, new AbortController().signal)).body.dump();
      expect(seen).toEqual(["identity", "gzip"]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("an answer nobody reads (plain or gzip) is let go at its deadline: the upstream's connection closes, and the gateway does not crash", async () => {
    const uncaught: unknown[] = [];
    const spy = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", spy);
    let closed = 0;
    const server = await serve((req, res) => {
      req.resume();
      res.on("close", () => closed++);
      const gzip = req.headers["accept-encoding"] === "gzip";
      res.writeHead(200, { "content-type": "application/json", ...(gzip ? { "content-encoding": "gzip" } : {}) });
      res.write(gzip ? gzipSync("{") : "{"); // then nothing more
    });
    const client = new UpstreamClient("up", { timeoutMs: 300, answerTimeoutMs: 300 });
    try {
      for (const headers of [{}, { "accept-encoding": "gzip" }] as Record<string, string>[]) {
        const res = await client.send({ url: server.url, headers, body: "{}" }, new AbortController().signal);
        await expect.poll(() => (res.body as unknown as { destroyed: boolean }).destroyed, { timeout: 3000 }).toBe(true);
      }
      await expect.poll(() => closed, { timeout: 3000 }).toBe(2);
      await new Promise((r) => setTimeout(r, 50)); // a destroyed body's 'error' has had its tick
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", spy);
      await client.close();
      await server.close();
    }
  });

  it("a stream whose media type is written in another case (Text/Event-Stream) is a stream: not cut at the answer deadline", async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "Text/Event-Stream; charset=utf-8" });
      let n = 0;
      const next = () => {
        res.write(`data: ${n}\n\n`);
        if (++n === 8) res.end();
        else setTimeout(next, 100);
      };
      next();
    });
    // 800 ms of stream; a JSON answer would have to be whole within 300.
    const client = new UpstreamClient("up", { timeoutMs: 300, answerTimeoutMs: 300 });
    try {
      const res = await client.send({ url: server.url, headers: {}, body: "{}" }, new AbortController().signal);
      const events: string[] = [];
      for await (const ev of parseSse(res.body)) events.push(ev.data);
      expect(events).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("an error answer that starts with a BOM still gives the provider's message", () => {
    const e = upstreamError("p", 429, {}, '\uFEFF{"error":{"message":"Slow down"}}');
    expect(e.message).toBe("Provider p returned HTTP 429: Slow down");
  });
});
