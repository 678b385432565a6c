// What a tenant is not told (why its media URL or its own MCP server could not be reached: the text would map an
// allowed host's ports) the operator still finds in a warning naming the request, its project and the cause, also
// with the access log off (review rev-f11f13, 6 and 7: the MCP line had the tenant's label and "fetch failed" only;
// the download's cause was on the access line only).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { freePort as closedPort } from "./helpers/ports.ts"; // a listener opened and closed: nothing listens there
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("hidden-causes");
const GEMINI = "google/gemini-2.5-flash";
let gemini: FakeGemini;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

/** The warnings `msg` for request `id`, once one is written (up to 5 s). */
async function warnings(msg: string, id: string) {
  for (let i = 0; i < 250; i++) {
    const found = log.records().filter((l) => l.msg === msg && l.requestId === id);
    if (found.length) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

beforeAll(async () => {
  gemini = await startFakeGemini();
  ({ gw, log, baseURL } = await startLoggedGateway({
    log: { access: false },
    store: { kind: "memory" },
    server: { url_fetch: { allow_hosts: ["127.0.0.1"] } },
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { [GEMINI]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  }, {}, "info"));
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});

describe("causes the client is not told, with the access log off", () => {
  it("a media URL on a closed port: a warning with the request id, project, field and ECONNREFUSED", async () => {
    const port = await closedPort();
    const field = "messages[0].content[1].image_url.url";
    const body = { model: GEMINI, messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: `http://127.0.0.1:${port}/cat.png` } }] }] };
    const r = await postJson(`${baseURL}/chat/completions`, body, { authorization: `Bearer ${KEY}`, "x-request-id": "req-hidden-media" });
    expect(r.status, r.text).toBe(400);
    expect(r.text).not.toMatch(/ECONNREFUSED/);
    expect(log.records().filter((l) => l.msg === "request")).toEqual([]); // the access log is off
    const [line] = await warnings("client media URL could not be downloaded", "req-hidden-media");
    expect(line).toMatchObject({ requestId: "req-hidden-media", project: "acme", field });
    expect(line!.cause).toMatch(new RegExp(`ECONNREFUSED.*127\\.0\\.0\\.1:${port}`));
  });

  it("a Responses mcp tool's server_url on a closed port: the 'could not connect' warning names the request, project and ECONNREFUSED", async () => {
    const port = await closedPort();
    const body = { model: GEMINI, input: "hi", tools: [{ type: "mcp", server_label: "x", server_url: `http://127.0.0.1:${port}/mcp`, require_approval: "never" }] };
    const r = await postJson(`${baseURL}/responses`, body, { authorization: `Bearer ${KEY}`, "x-request-id": "req-hidden-mcp" });
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.text).not.toMatch(/ECONNREFUSED/);
    const [line] = await warnings("mcp server could not connect", "req-hidden-mcp");
    expect(line).toMatchObject({ requestId: "req-hidden-mcp", project: "acme", server: "x" });
    expect(line!.cause).toMatch(/ECONNREFUSED/);
  });
});
