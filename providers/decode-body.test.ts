import { describe, expect, it } from "vitest";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, createGzip, deflateSync, gzipSync } from "node:zlib";
import { parseSse } from "../core/sse/parse.ts";
import { failFromResponse, readUpstreamJson, UpstreamClient } from "./http.ts";

const ENCODE: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, "x-gzip": gzipSync, br: brotliCompressSync, deflate: deflateSync };

/** An upstream whose every answer `answer` writes; `closed` counts connections closed by the gateway mid-answer. */
async function upstream(answer: (res: ServerResponse) => void) {
  const seen = { closedEarly: 0 };
  const server = createServer((req, res) => {
    req.resume();
    res.on("close", () => { if (!res.writableFinished) seen.closedEarly++; });
    answer(res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const client = new UpstreamClient("up", { timeoutMs: 2000 });
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

const chunk = (content: string) => JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: null }], usage: null });
const sse = `data: ${chunk("Hé")}\n\ndata: ${chunk("llo")}\n\ndata: [DONE]\n\n`;

describe("compressed upstream answers (Content-Encoding)", () => {
  it("gzip, br and deflate JSON answers, and error answers, read as the JSON they hold (they were a 502 'not valid JSON')", async () => {
    for (const [coding, encode] of Object.entries(ENCODE)) {
      let status = 200;
      const up = await upstream((res) => {
        const body = status === 200 ? { id: "chatcmpl-1", text: "Hé ".repeat(1000) } : { error: { message: "Rate limit reached" } };
        res.writeHead(status, { "content-type": "application/json", "content-encoding": coding }).end(encode(Buffer.from(JSON.stringify(body))));
      });
      try {
        expect([coding, (await readUpstreamJson("up", await up.send())).text]).toEqual([coding, "Hé ".repeat(1000)]);
        status = 429;
        expect((await failFromResponse("up", await up.send())).message).toBe("Provider up returned HTTP 429: Rate limit reached");
      } finally {
        await up.close();
      }
    }
  });

  it("a compressed stream reads event by event, written a few bytes at a time", async () => {
    const up = await upstream((res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      const bytes = gzipSync(Buffer.from(sse));
      let i = 0;
      const next = () => {
        res.write(bytes.subarray(i, i + 16));
        i += 16;
        if (i >= bytes.length) res.end();
        else setImmediate(next);
      };
      next();
    });
    try {
      const out: string[] = [];
      for await (const ev of parseSse((await up.send()).body)) out.push(ev.data);
      expect(out).toEqual([chunk("Hé"), chunk("llo"), "[DONE]"]);
    } finally {
      await up.close();
    }
  });

  it("a body that does not decode, or a coding the gateway cannot decode, is a retryable 502 that says so", async () => {
    const bodies: [string, Buffer][] = [
      ["gzip", Buffer.from('{"id":"plain text labelled gzip"}')],
      ["gzip", gzipSync(Buffer.from('{"id":"cut short"}')).subarray(0, 12)],
      ["br", gzipSync(Buffer.from("{}"))],
    ];
    for (const [coding, body] of bodies) {
      const up = await upstream((res) => res.writeHead(200, { "content-type": "application/json", "content-encoding": coding }).end(body));
      try {
        const err = await readUpstreamJson("up", await up.send()).catch((e) => e);
        expect(err).toMatchObject({ status: 502, code: "UPSTREAM_ERROR", retryable: true, details: { provider: "up", reason: "content_encoding", content_encoding: coding } });
        expect(err.message).toContain(`Provider up sent a ${coding} answer that does not decode`);
      } finally {
        await up.close();
      }
    }
    const up = await upstream((res) => res.writeHead(200, { "content-type": "application/json", "content-encoding": "zstd" }).end("x"));
    try {
      await expect(up.send()).rejects.toMatchObject({ status: 502, retryable: true, message: "Provider up answered with Content-Encoding zstd, which the gateway cannot decode" });
    } finally {
      await up.close();
    }
  });

  it("the upstream's own failures pass through the decoder as they were; a reader that lets go drops the upstream", async () => {
    // One event, then silence: the event is read, then the upstream timeout (2 s) ends the body, not a decode error.
    const silent = await upstream((res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      const gz = createGzip();
      gz.pipe(res);
      gz.write(`data: ${chunk("Hé")}\n\n`);
      gz.flush();
    });
    try {
      const body = (await silent.send()).body;
      const events: string[] = [];
      const read = (async () => { for await (const ev of parseSse(body)) events.push(ev.data); })();
      await expect(read).rejects.toMatchObject({ code: "UPSTREAM_TIMEOUT", details: { reason: "body_timeout" } });
      expect(events).toEqual([chunk("Hé")]);
      const left = (await silent.send()).body;
      left.destroy();
      await expect.poll(() => silent.seen.closedEarly).toBe(2);
    } finally {
      await silent.close();
    }
  });
});
