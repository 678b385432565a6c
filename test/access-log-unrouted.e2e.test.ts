// Responses outside the endpoint pipeline, as the access log and /metrics see them: a request no route takes (404,
// 405) is counted under endpoint "unrouted" (never its path) and gets an access line; probes and the OpenAPI document
// are not logged, but their bytes are never charged to the next logged request on the same keep-alive connection;
// /healthz and /readyz carry x-request-id like every answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, request } from "node:http";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("unrouted");

let fake: FakeOpenAI;
let gw: RunningGateway;
let log: CapturedLog;

beforeAll(async () => {
  fake = await startFakeOpenAI({ text: "a short answer" });
  ({ gw, log } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/m": { endpoints: [{ provider: "up", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The client-side port of the connection it came on (the same port: the same keep-alive connection). */
  localPort: number;
}

/** One request over `agent` (one keep-alive connection). */
function send(agent: Agent, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${gw.url}${path}`, {
      agent, method,
      headers: { ...(text ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) } : {}), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      const localPort = res.socket.localPort!; // the socket goes back to the agent once the response has ended
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString(), localPort }));
    });
    req.on("error", reject);
    req.end(text);
  });
}

const chatBody = { model: "test/m", messages: [{ role: "user", content: "hi" }] };
const requests = async () => (await gw.gateway.metrics.registry.getSingleMetric("gateway_requests_total")!.get()).values;

async function accessLine(requestId: string): Promise<Record<string, any>> {
  const [line] = await log.accessOnce((r) => r.requestId === requestId, 1);
  if (!line) throw new Error(`no access line for ${requestId}`);
  return line;
}

describe("bytes on a keep-alive connection", () => {
  it("a chat after /api/openapi.json, /healthz and /readyz on the same connection is charged only its own bytes", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const openapi = await send(agent, "GET", "/api/openapi.json");
      expect(openapi.status).toBe(200);
      expect(openapi.body.length).toBeGreaterThan(10_000);
      expect((await send(agent, "GET", "/healthz")).status).toBe(200);
      expect((await send(agent, "GET", "/readyz")).status).toBe(200);
      const chat = await send(agent, "POST", "/api/v1/chat/completions", chatBody, { authorization: `Bearer ${KEY}`, "x-request-id": "req-after-openapi" });
      expect(chat.status).toBe(200);
      expect(chat.localPort).toBe(openapi.localPort); // one connection throughout
      const line = await accessLine("req-after-openapi");
      expect(line.bytesOut).toBeGreaterThan(chat.body.length); // its body plus status line and headers
      expect(line.bytesOut).toBeLessThan(chat.body.length + 2000);
      expect(line.bytesIn).toBeGreaterThan(JSON.stringify(chatBody).length);
      expect(line.bytesIn).toBeLessThan(JSON.stringify(chatBody).length + 1000);
    } finally {
      agent.destroy();
    }
  });
});

describe("a request no route takes", () => {
  it("404: an access line and gateway_requests_total{endpoint=\"unrouted\",code=\"404\"}, never labelled by its path", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r = await send(agent, "GET", "/api/v1/no-such-thing-4f1c?x=1", undefined, { "x-request-id": "req-unrouted-404" });
      expect(r.status).toBe(404);
      expect(r.headers["x-request-id"]).toBe("req-unrouted-404");
      const line = await accessLine("req-unrouted-404");
      expect(line).toMatchObject({ method: "GET", path: "/api/v1/no-such-thing-4f1c", endpoint: "unrouted", status: 404, errorCode: "NOT_FOUND" });
      expect(line.bytesOut).toBeGreaterThan(r.body.length);
      // The next logged request on the connection is charged its own bytes, not the 404's.
      const chat = await send(agent, "POST", "/api/v1/chat/completions", chatBody, { authorization: `Bearer ${KEY}`, "x-request-id": "req-after-404" });
      expect((await accessLine("req-after-404")).bytesOut).toBeLessThan(chat.body.length + 2000);
    } finally {
      agent.destroy();
    }
    const values = await requests();
    expect(values.find((v) => v.labels.endpoint === "unrouted" && v.labels.code === "404")?.value).toBe(1);
    expect(values.some((v) => Object.values(v.labels).some((x) => String(x).includes("no-such-thing")))).toBe(false);
  });

  it("405 (a known path, another method): counted and logged the same way, with its Allow header", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r = await send(agent, "GET", "/api/v1/chat/completions", undefined, { "x-request-id": "req-unrouted-405" });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe("POST");
      expect(await accessLine("req-unrouted-405")).toMatchObject({ endpoint: "unrouted", status: 405, errorCode: "INVALID_REQUEST" });
      // A path served by several methods lists them all.
      const mcp = await send(agent, "PUT", "/api/mcp", {});
      expect(mcp.status).toBe(405);
      expect(String(mcp.headers.allow).split(", ").sort()).toEqual(["DELETE", "GET", "POST"]);
      // Paths with parameters too: a stored response.
      const stored = await send(agent, "PUT", "/api/v1/responses/resp_abc", {});
      expect(stored.status).toBe(405);
      expect(String(stored.headers.allow).split(", ").sort()).toEqual(["DELETE", "GET", "HEAD"]); // HEAD wherever GET is
      expect((await send(agent, "PUT", "/api/v1/responses/resp_abc/nothing", {})).status).toBe(404);
      // An admin path without an admin key: the admin API's 401, which names no method (no route map for the keyless).
      const key = await send(agent, "DELETE", "/admin/v1/keys/acme/k1", undefined, { "x-request-id": "req-unrouted-admin" });
      expect([key.status, key.headers.allow]).toEqual([401, undefined]);
      expect(await accessLine("req-unrouted-admin")).toMatchObject({ endpoint: "unrouted", status: 401, errorCode: "INVALID_API_KEY" });
    } finally {
      agent.destroy();
    }
    const values = await requests();
    expect(values.find((v) => v.labels.endpoint === "unrouted" && v.labels.code === "405")?.value).toBe(3);
    expect(values.find((v) => v.labels.endpoint === "unrouted" && v.labels.code === "401")?.value).toBe(1);
  });
});

describe("health probes", () => {
  it("/healthz and /readyz echo x-request-id (or make one), and write no access line", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const path of ["/healthz", "/readyz"]) {
        const given = await send(agent, "GET", path, undefined, { "x-request-id": `req-probe${path.replace("/", "-")}` });
        expect(given.status).toBe(200);
        expect(given.headers["x-request-id"]).toBe(`req-probe${path.replace("/", "-")}`);
        const made = await send(agent, "GET", path);
        expect(made.headers["x-request-id"]).toMatch(/\S/);
      }
    } finally {
      agent.destroy();
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(log.access().filter((l) => String(l.requestId).startsWith("req-probe"))).toEqual([]);
  });
});
