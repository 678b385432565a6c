// writeError is the last resort of a request that failed: if it threw too, the client got a fallback 500 under a new
// request id (a Gemini client not even its envelope) and the request's cleanup never ran.
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { writeError } from "./respond.ts";
import { GatewayError } from "../errors.ts";
import type { GatewayContext } from "../pipeline/context.ts";
import { closeServer } from "./respond.testkit.ts";

let server: Server | undefined;
afterEach(async () => {
  await closeServer(server);
  server = undefined;
});

describe("writeError", () => {
  it("answers with the request's id and its protocol's envelope when the response headers cannot be built", async () => {
    const logged: string[] = [];
    const ctx = {
      requestId: "req_headers_throw", protocol: "gemini", responseHeaders: {}, startedAt: performance.now(),
      attempts: [{ provider: "up", model: "m", latencyMs: 1, status: 200 }], response: { kind: "json", status: 200, body: {} },
      // Building the observability headers throws (as pricing Infinity tokens did: big.js "Invalid number").
      get generationId(): string { throw new Error("Invalid number"); },
      gateway: { log: { error: (msg: string) => logged.push(msg) } },
    } as unknown as GatewayContext;
    server = createServer((_req, res) => writeError(ctx, res, new GatewayError(502, "UPSTREAM_ERROR", "bad answer"), { firstByte() {} }));
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(res.status).toBe(502);
    expect(res.headers.get("x-request-id")).toBe("req_headers_throw");
    const body = await res.json();
    expect(body.error.code).toBe(502); // Google's envelope
    expect(logged).toHaveLength(1);
  });
});
