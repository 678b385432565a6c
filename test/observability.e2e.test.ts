// /metrics (Prometheus) and /api/openapi.json (OpenAPI 3.1), as an SRE and a client generator see them. Metrics
// have a listener of their own (security issue 25, item 7): the API port, which every client reaches, does not
// publish them unless configured to, and then only behind a token; per-project series are opt-in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validate } from "@readme/openapi-parser";
import { keyEntry, postJson, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { ConfigError } from "../core/config/source.ts";
import { createServer, type Server } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { PortInUseError, startGateway } from "../core/server.ts";
import { captureLogger } from "./helpers/log-capture.ts";

// A live key (the model is served by the simulator anyway): sandbox tokens are not billed, so not in gateway_tokens_total.
const KEY = testKey("observe");
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
});
afterAll(async () => {
  await gw?.close();
});

describe("GET /metrics", () => {
  it("exposes requests, latency histograms, in-flight, tokens and process metrics with Prometheus names", async () => {
    await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "count me" }] }, { authorization: `Bearer ${KEY}` });
    await postJson(`${gw.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", stream: true, messages: [{ role: "user", content: "count me" }] }, { authorization: `Bearer ${KEY}` });
    await postJson(`${gw.baseURL}/chat/completions`, { model: "nope/nope", messages: [{ role: "user", content: "x" }] }, { authorization: `Bearer ${KEY}` });
    const res = await fetch(gw.metricsUrl!);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/gateway_requests_total\{endpoint="chat",model="openai\/gpt-4o-mini",provider="sim",code="200"\} 2/);
    expect(text).toMatch(/gateway_requests_total\{endpoint="chat",model="unknown",provider="",code="404"\} 1/); // never the client's string
    expect(text).toMatch(/gateway_request_duration_seconds_bucket\{le="[^"]+",endpoint="chat",model="openai\/gpt-4o-mini",provider="sim"\}/);
    expect(text).toMatch(/gateway_time_to_first_byte_seconds_count\{endpoint="chat",model="openai\/gpt-4o-mini",provider="sim"\} 2/);
    expect(text).toMatch(/gateway_upstream_duration_seconds_count\{provider="sim",model="openai\/gpt-4o-mini",outcome="ok"\} 2/);
    expect(text).toMatch(/gateway_requests_in_flight\{endpoint="chat"\} 0/);
    expect(text).toMatch(/gateway_tokens_total\{(?=[^}]*direction="output")(?=[^}]*model="openai\/gpt-4o-mini")[^}]*\} [1-9]\d*/);
    expect(text).toContain("process_cpu_seconds_total");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
  });
});

describe("who may read /metrics", () => {
  const TOKEN = "scrape-token-0123456789";
  const spend = (g: TestGateway) => postJson(`${g.baseURL}/chat/completions`, { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "spend" }] }, { authorization: `Bearer ${LIVE}` });
  const LIVE = testKey("observe-live");
  const priced = {
    models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m", pricing: { input: "0.000001", output: "0.000002" } }] } },
    projects: { "acme-secret-project": { keys: [keyEntry("k", LIVE)] } },
  };

  it("by default: 404 on the API port, served on a loopback listener of its own, without project names or spend", async () => {
    const g = await startTestGateway(priced);
    try {
      expect((await spend(g)).status).toBe(200);
      const api = await fetch(`${g.url}/metrics`);
      expect(api.status).toBe(404);
      expect((await api.json()).error.code).toBe("NOT_FOUND");
      expect(new URL(g.metricsUrl!).hostname).toBe("127.0.0.1");
      expect(new URL(g.metricsUrl!).port).not.toBe(new URL(g.url).port);
      const text = await (await fetch(g.metricsUrl!)).text();
      expect(text).toMatch(/gateway_requests_total\{endpoint="chat",model="openai\/gpt-4o-mini",provider="sim",code="200"\} 1/);
      expect(text).not.toContain("acme-secret-project");
      expect(text).not.toMatch(/gateway_project_/);
      // The listener serves /metrics and nothing else.
      expect((await fetch(g.metricsUrl!.replace("/metrics", "/api/v1/models"))).status).toBe(404);
    } finally {
      await g.close();
    }
  });

  it("metrics.project_labels: the per-project token and cost series, by project name", async () => {
    const g = await startTestGateway({ ...priced, metrics: { project_labels: true } });
    try {
      expect((await spend(g)).status).toBe(200);
      const text = await (await fetch(g.metricsUrl!)).text();
      expect(text).toMatch(/gateway_project_cost_usd_total\{project="acme-secret-project",model="openai\/gpt-4o-mini"\} [0-9.e-]+/);
    } finally {
      await g.close();
    }
  });

  it("metrics.token: 401 without it (on the listener and, with api_port, on the API port), 200 with it", async () => {
    const g = await startTestGateway({ ...priced, metrics: { token: TOKEN, api_port: true } });
    try {
      for (const url of [g.metricsUrl!, `${g.url}/metrics`]) {
        const none = await fetch(url);
        expect(none.status, url).toBe(401);
        expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect((await none.json()).error.code).toBe("UNAUTHORIZED");
        expect((await fetch(url, { headers: { authorization: "Bearer scrape-token-wrong-000" } })).status).toBe(401);
        const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(ok.status, url).toBe(200);
        expect(await ok.text()).toContain("gateway_requests_total");
      }
    } finally {
      await g.close();
    }
  });

  it("metrics.api_port without a token is a config error; listener: false serves no metrics at all", async () => {
    const err = await startTestGateway({ ...priced, metrics: { api_port: true } }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String((err as ConfigError).problems.map((p) => p.message))).toMatch(/token/);
    const g = await startTestGateway({ ...priced, metrics: { listener: false } });
    try {
      expect(g.metricsUrl).toBeUndefined();
      expect((await fetch(`${g.url}/metrics`)).status).toBe(404);
    } finally {
      await g.close();
    }
  });
});

describe("a metrics port in use", () => {
  /** Holds host:port (or finds it held already: busy either way). */
  const hold = (port: number) => new Promise<Server | undefined>((resolve, reject) => {
    const s = createServer();
    s.once("error", (e: NodeJS.ErrnoException) => (e.code === "EADDRINUSE" ? resolve(undefined) : reject(e)));
    s.listen(port, "127.0.0.1", () => resolve(s));
  });
  const start = (metrics: Record<string, unknown> | undefined) => {
    const dir = mkdtempSync(join(tmpdir(), "mg-metrics-port-"));
    writeFileSync(join(dir, "gateway.yaml"), YAML.stringify({ providers: { sim: { protocol: "sim" } }, ...(metrics ? { metrics } : {}) }));
    const { logger, log } = captureLogger("warn");
    return { log, started: startGateway({ configFile: join(dir, "gateway.yaml"), port: 0, host: "127.0.0.1", logger }) };
  };

  it("the default port (a second gateway on the machine): the gateway starts without the listener and says why", async () => {
    const blocker = await hold(9464);
    try {
      const { log, started } = start(undefined);
      const gw = await started;
      try {
        expect(gw.metricsUrl).toBeUndefined();
        expect(log.records().map((r) => r.msg)).toContain("metrics port 9464 on 127.0.0.1 is in use: GET /metrics is not served (set metrics.port)");
        expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      } finally {
        await gw.close();
      }
    } finally {
      blocker?.close();
    }
  });

  it("a port set in metrics.port: the start is refused, as for the API port", async () => {
    const blocker = (await hold(0))!;
    try {
      const port = (blocker.address() as { port: number }).port;
      const err = await start({ port }).started.catch((e) => e);
      expect(err).toBeInstanceOf(PortInUseError);
      expect((err as Error).message).toBe(`metrics port ${port} on 127.0.0.1 is in use`);
    } finally {
      blocker.close();
    }
  });
});

describe("GET /api/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document covering every endpoint, generated from the request schemas", async () => {
    const res = await fetch(`${gw.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const chat = doc.paths["/v1/chat/completions"].post;
    expect(chat.requestBody.content["application/json"].schema.$ref).toBe("#/components/schemas/ChatCompletionRequest");
    expect(doc.components.schemas.ChatCompletionRequest.properties.temperature).toEqual({ type: ["number", "null"], minimum: 0, maximum: 2 });
    expect(chat.responses["200"].content["text/event-stream"]).toBeDefined();
    // Each error answer is described once (components.responses) and referred to by every operation.
    expect(chat.responses["401"].$ref).toBe("#/components/responses/Error401");
    expect(doc.components.responses.Error401.content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorEnvelope");
  });
});
