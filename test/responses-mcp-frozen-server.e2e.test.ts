// The Responses API's mcp tool naming a gateway.yaml server that is frozen (accepts connections, never answers):
// the gateway lists its tools before the model's first turn. That listing used to wait the server's whole
// timeout_ms (60 s by default) on every request, its circuit never asked, even when already open.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { startResponsesClients, KEY, type ResponsesClientsEnv } from "./helpers/responses-clients.ts";
import { startBlackhole, type Blackhole } from "./mcp/blackhole.ts";
import { healthOf } from "../core/health/index.ts";

let env: ResponsesClientsEnv;
let hole: Blackhole;
let client: OpenAI;

beforeAll(async () => {
  hole = await startBlackhole();
  env = await startResponsesClients({
    native: false,
    configure: (c) => {
      // Two names for the one frozen server, each with its own breaker; timeout_ms the default 60 s.
      c.mcp_servers = { paused: { url: hole.url }, frozen: { url: hole.url } };
      c.routing = { ...c.routing, circuit_breaker: { consecutive_failures: 2, cooldown_ms: 600_000 } };
    },
  });
  client = new OpenAI({ apiKey: KEY, baseURL: env.gw.baseURL, maxRetries: 0, timeout: 120_000 });
}, 30_000);

afterAll(async () => {
  await env?.close();
  await hole?.close();
});

const ask = (server: string) => client.responses.create({
  model: "anthropic/claude-sonnet-4", input: "Which server are you?", tools: [{ type: "mcp", server_label: server, require_approval: "never" }],
}).then(() => undefined, (err: unknown) => err);

describe("a Responses mcp tool on a frozen server of gateway.yaml", () => {
  it("whose circuit is open fails the request at once, as a server whose tools cannot be listed, nothing sent to it", async () => {
    // Opened as its failures would (consecutive_failures: 2), without waiting out two 60 s connects.
    for (let i = 0; i < 2; i++) healthOf(env.gw.gateway).record("mcp:paused", "paused", false);
    const before = hole.connections;
    const err = await ask("paused");
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((err as Error).message).toContain('tools[0]: listing the tools of MCP server "paused" failed: MCP server "paused" is failing; calls are paused for a while (circuit open)');
    expect(Number((err as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after"))).toBeGreaterThan(0);
    expect(hole.connections).toBe(before);
    expect(env.requestsOf("anthropic")).toEqual([]); // no model turn
  }, 20_000);

  it("whose circuit is closed fails the request once a list's wait (10 s) is over, not after its 60 s", async () => {
    const err = await ask("frozen");
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((err as Error).message).toContain('tools[0]: listing the tools of MCP server "frozen" failed: MCP server "frozen" did not list its tools within 10000 ms');
    expect(env.requestsOf("anthropic")).toEqual([]);
  }, 45_000);
});
