// The answer to a request Node's parser refuses (header block too large, body not received in time) is in the
// envelope of the API its path belongs to, as every other refusal on that path is.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { answerClientError } from "./client-error.ts";
import { exchange, head, type RawResponse } from "../../test/helpers/raw-http.ts";

let server: Server;
let port: number;
beforeAll(async () => {
  // A handler that never reads the body, so a request whose body never comes is cut by requestTimeout.
  server = createServer({ maxHeaderSize: 16_384, requestTimeout: 500, connectionsCheckingInterval: 100 }, () => {});
  server.on("clientError", (err, socket) => answerClientError(err, socket as Socket));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** One request whose header block is over the limit, written in one go (as curl sends it). */
async function tooLarge(path: string): Promise<RawResponse> {
  const x = await exchange(port, (w) => w.write(head("POST", path, { host: "gw", "x-big": "a".repeat(20_000), "content-length": 2 }) + "{}").then(() => {}), { waitMs: 10_000 });
  expect(x.responses).toHaveLength(1);
  return x.responses[0]!;
}

describe("431 and 408 in the path's protocol", () => {
  it("Messages: Anthropic's envelope (type error, error.type) with request-id", async () => {
    const r = await tooLarge("/api/v1/messages?beta=true");
    expect(r.status).toBe(431);
    expect(r.json).toMatchObject({ type: "error", error: { type: "invalid_request_error", code: "INVALID_REQUEST", message: "Request header fields too large" } });
    expect(r.headers["request-id"]).toBe(r.headers["x-request-id"]);
  });

  it("Gemini: Google's envelope with error.status", async () => {
    const r = await tooLarge("/api/v1beta/models/google/gemini-2.5-flash:generateContent");
    expect(r.status).toBe(431);
    expect(r.json.error).toMatchObject({ code: 431, status: "INVALID_ARGUMENT", message: "Request header fields too large" });
    expect(r.json.error.details[0]).toMatchObject({ reason: "INVALID_REQUEST" });
  });

  it("elsewhere: the spec's envelope, no request-id", async () => {
    const r = await tooLarge("/api/v1/chat/completions");
    expect(r.status).toBe(431);
    expect(r.json).toEqual({ error: { code: "INVALID_REQUEST", message: "Request header fields too large", type: "invalid_request_error", param: null } });
    expect(r.headers["request-id"]).toBeUndefined();
    expect(r.headers["x-request-id"]).toMatch(/\S/);
  });

  it("408 for a Messages body that never comes: Anthropic's timeout_error", async () => {
    const x = await exchange(port, (w) => w.write(head("POST", "/api/v1/messages", { host: "gw", "content-length": 100 }) + "{").then(() => {}), { waitMs: 10_000 });
    const r = x.responses[0]!;
    expect(r.status).toBe(408);
    expect(r.json).toMatchObject({ type: "error", error: { type: "timeout_error", message: "The request was not received in time" } });
    expect(r.headers["request-id"]).toBe(r.headers["x-request-id"]);
  });
});
