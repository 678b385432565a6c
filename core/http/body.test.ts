import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import type { IncomingMessage } from "node:http";
import { readJsonBody } from "./body.ts";
import { GatewayError } from "../errors.ts";

/** A request-shaped stream: readJsonBody reads headers and 'data'/'end'/'error'/'close' events only. */
function request(contentType: string | undefined, ...parts: string[]): IncomingMessage {
  const req = new PassThrough() as unknown as IncomingMessage & PassThrough;
  req.headers = contentType ? { "content-type": contentType } : {};
  queueMicrotask(() => {
    for (const p of parts) req.write(p);
    req.end();
  });
  return req;
}

describe("readJsonBody", () => {
  it("parses a body that arrives in several chunks", async () => {
    const req = request("application/json", '{"model":"a/b",', '"messages":[]}');
    expect(await readJsonBody(req, 1024, "INVALID_REQUEST")).toEqual({ model: "a/b", messages: [] });
  });

  it("leaves no listener on the request once read: a streaming request lives as long as its stream and must not keep the raw body", async () => {
    const req = request("application/json", '{"model":"a/b","messages":[{"role":"user","content":"', "x".repeat(10_000), '"}]}');
    await readJsonBody(req, 1 << 20, "INVALID_REQUEST");
    for (const event of ["data", "end", "error", "close"]) expect(req.listenerCount(event), event).toBe(0);
  });

  it("refuses a body over the limit with 413 and keeps draining the rest", async () => {
    const req = request("application/json", '{"a":"', "y".repeat(2000), '"}');
    const err = await readJsonBody(req, 100, "INVALID_REQUEST").catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(413);
    expect(req.listenerCount("data")).toBe(1);
  });

  it("reads a body that starts with a UTF-8 byte order mark as the JSON after it", async () => {
    const req = request("application/json", "\uFEFF", '{"model":"a/b"}');
    expect(await readJsonBody(req, 1024, "INVALID_REQUEST")).toEqual({ model: "a/b" });
  });

  it("names the content-type field when the body is not JSON", async () => {
    const err = await readJsonBody(request("text/plain", "hi"), 100, "BAD_REQUEST").catch((e) => e);
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).message).toMatch(/Content-Type/);
  });
});
