// Content-Encoding on JSON request bodies, through readJsonBody (body-encoding.ts says what is promised).
import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import type { IncomingMessage } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { readJsonBody } from "./body.ts";
import type { GatewayError } from "../errors.ts";

/** A request-shaped stream with a Content-Encoding, its body written in two chunks; complete once it ends, as Node's. */
function request(encoding: string | undefined, body: Buffer): IncomingMessage {
  const req = new PassThrough() as unknown as IncomingMessage & PassThrough;
  req.headers = { "content-type": "application/json", ...(encoding ? { "content-encoding": encoding } : {}) };
  req.once("end", () => (req.complete = true));
  queueMicrotask(() => {
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half));
    req.end(body.subarray(half));
  });
  return req;
}

const body = { model: "a/b", messages: [{ role: "user", content: "héllo ✓ ".repeat(50) }] };
const json = Buffer.from(JSON.stringify(body));
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error("read"); }, (e: GatewayError) => e);

describe("readJsonBody with a Content-Encoding", () => {
  it.each([
    ["gzip", gzipSync(json)], ["x-gzip", gzipSync(json)], ["deflate", deflateSync(json)], ["br", brotliCompressSync(json)],
    ["GZIP", gzipSync(json)], ["identity", json], ["identity, gzip", gzipSync(json)],
  ])("%s: the decoded JSON", async (encoding, bytes) => {
    expect(await readJsonBody(request(encoding, bytes), 1 << 20, "INVALID_REQUEST")).toEqual(body);
  });

  it("a body that inflates past the limit (a decompression bomb) is 413, naming the limit, without decoding the rest", async () => {
    const bomb = gzipSync(Buffer.from(`{"a":"${"0".repeat(50 * 1024 * 1024)}"}`)); // ~50 KiB that inflates to 50 MiB
    expect(bomb.length).toBeLessThan(1 << 20);
    const err = await failure(readJsonBody(request("gzip", bomb), 1 << 20, "INVALID_REQUEST"));
    expect(err.status).toBe(413);
    expect(err.details).toMatchObject({ limit: 1 << 20 });
  });

  it("a body that sends more than the limit, however little it decodes to (empty deflate blocks before a small JSON), is 413 naming the setting", async () => {
    // Each empty stored block (5 bytes) decodes to nothing; before, a client could send any number of them.
    const zlibbed = deflateSync(json);
    const empty = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]).toString("latin1").repeat((1 << 20) / 5 + 1);
    const padded = Buffer.concat([zlibbed.subarray(0, 2), Buffer.from(empty, "latin1"), zlibbed.subarray(2)]);
    expect(await readJsonBody(request("deflate", padded), 2 << 20, "INVALID_REQUEST"), "a valid deflate body").toEqual(body);
    const err = await failure(readJsonBody(request("deflate", padded), 1 << 20, "INVALID_REQUEST"));
    expect(err.status).toBe(413);
    expect(err.message).toContain("server.max_body_bytes");
    expect(err.details).toMatchObject({ limit: 1 << 20 });
  });

  it("a body that is not what its coding says: 400 naming content-encoding (a plain body labelled gzip included)", async () => {
    for (const [encoding, bytes] of [["gzip", json], ["br", Buffer.from("not brotli at all")], ["deflate", gzipSync(json)]] as const) {
      const err = await failure(readJsonBody(request(encoding, bytes), 1 << 20, "INVALID_REQUEST"));
      expect(err.status, encoding).toBe(400);
      expect(err.details).toMatchObject({ field: "content-encoding" });
      expect(err.message).toContain(`not valid ${encoding}`);
    }
  });

  it("a coding it does not decode, or two: 415 naming the header and the codings it takes", async () => {
    for (const encoding of ["zstd", "compress", "gzip, br"]) {
      const err = await failure(readJsonBody(request(encoding, json), 1 << 20, "INVALID_REQUEST"));
      expect(err.status, encoding).toBe(415);
      expect(err.code).toBe("UNSUPPORTED_MEDIA_TYPE");
      expect(err.message).toContain(encoding);
      expect(err.details).toMatchObject({ field: "content-encoding", supported: ["gzip", "deflate", "br"] });
      expect(err.headers?.["accept-encoding"], "RFC 9110 §15.5.16: the codings it takes").toBe("gzip, deflate, br");
    }
  });
});
