import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { crossOrigin } from "./cors.ts";
import { corsPolicy } from "./cors-policy.ts";
import { RouteMethods } from "./route-methods.ts";

const APP = "http://localhost:5173";
const policy = corsPolicy({ allow_origins: [APP], max_age_s: 120 }).policy!;
const routes = new RouteMethods();
routes.add("POST", "/api/v1/chat/completions");
routes.add("GET", "/api/v1/responses/:id");
routes.add("DELETE", "/api/v1/responses/:id");

let server: Server;
let base: string;
/** What the server did after the step: "answered", "refused <status>" or "went on" (an answer of its own, as a route's). */
let step = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const s = crossOrigin(policy, req, res, path, routes);
    if (s === "answered") return void (step = "answered");
    if (s) {
      step = `refused ${s.status}`;
      res.writeHead(s.status, { "content-type": "application/json" });
      return void res.end(JSON.stringify(s.toJSON()));
    }
    step = "went on";
    // As the endpoints answer: writeHead with headers of its own, which the step's are merged with.
    res.writeHead(401, { "content-type": "application/json", "x-request-id": "req_1", "retry-after": "3" });
    res.end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const preflight = (path: string, origin: string, extra: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", ...extra } });

describe("crossOrigin", () => {
  it("a preflight from an allowed origin: 204 with the route's methods, the headers asked for and the max age, no further", async () => {
    const res = await preflight("/api/v1/responses/resp_1", APP, { "access-control-request-headers": "authorization,content-type,x-stainless-os" });
    expect(step).toBe("answered");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, DELETE");
    expect(res.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os");
    expect(res.headers.get("access-control-max-age")).toBe("120");
    expect(res.headers.get("vary")).toBe("Origin, Access-Control-Request-Headers");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("a preflight from another origin: refused with 403 and no CORS header", async () => {
    const res = await preflight("/api/v1/chat/completions", "https://evil.example");
    expect(step).toBe("refused 403");
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect((await res.json()).error.message).toBe('Origin "https://evil.example" may not call this gateway from a browser: it is not in server.cors.allow_origins');
  });

  it("a preflight for a path no route serves goes on (to its 404)", async () => {
    await preflight("/api/v1/nothing-here", APP);
    expect(step).toBe("went on");
  });

  it("an answer to an allowed origin carries Allow-Origin, Vary and Expose-Headers beside its own headers", async () => {
    const res = await fetch(`${base}/api/v1/chat/completions`, { method: "POST", headers: { origin: APP }, body: "{}" });
    expect(step).toBe("went on");
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP);
    expect(res.headers.get("vary")).toBe("Origin");
    expect(res.headers.get("access-control-expose-headers")).toMatch(/^\*, x-request-id, .*retry-after-ms/);
    expect(res.headers.get("x-request-id")).toBe("req_1");
    expect(res.headers.get("retry-after")).toBe("3");
  });

  it("an answer to another origin, or to no origin: Vary only", async () => {
    for (const headers of [{ origin: "https://evil.example" }, {}] as Record<string, string>[]) {
      const res = await fetch(`${base}/api/v1/chat/completions`, { method: "POST", headers, body: "{}" });
      expect(res.headers.get("vary")).toBe("Origin");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-expose-headers")).toBeNull();
    }
  });

  it("OPTIONS that is no preflight (no Access-Control-Request-Method) goes on, as before", async () => {
    await fetch(`${base}/api/v1/chat/completions`, { method: "OPTIONS", headers: { origin: APP } });
    expect(step).toBe("went on");
  });

  it("outside /api/ (admin API, console, metrics, probes): nothing, whatever the origin", async () => {
    for (const path of ["/admin/v1/keys", "/healthz", "/metrics", "/console"]) {
      const res = await preflight(path, APP);
      expect(step, path).toBe("went on");
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
      expect(res.headers.get("vary"), path).toBeNull();
    }
  });
});
