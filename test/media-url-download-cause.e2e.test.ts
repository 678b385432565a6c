// A client media URL the gateway could not connect to is told to the client only as "could not be downloaded"
// (the connection error would map an allowed host's ports), but the operator needs the reason: the request's access
// line carries it as errorCause, with the request id (review r52 R5).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { freePort as closedPort } from "./helpers/ports.ts"; // a listener opened and closed: nothing listens there
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./upstreams/gemini.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("download-cause");
const GEMINI = "google/gemini-2.5-flash";

let gemini: FakeGemini;
let gw: RunningGateway;
let log: CapturedLog;
let baseURL: string;

beforeAll(async () => {
  gemini = await startFakeGemini();
  ({ gw, log, baseURL } = await startLoggedGateway({
    store: { kind: "memory" },
    server: { url_fetch: { allow_hosts: ["127.0.0.1"] } },
    providers: { gem: { protocol: "gemini", base_url: gemini.baseUrl, api_key: FAKE_GEMINI_KEY } },
    models: { [GEMINI]: { type: "language", endpoints: [{ provider: "gem", model: "gemini-2.5-flash", pricing: { input: "0.0000003", output: "0.0000025" } }] } },
    projects: { acme: { keys: [keyEntry("ci", KEY)] } },
  }));
});

afterAll(async () => {
  await gw?.close();
  await gemini?.close();
});

describe("a client media URL that cannot be connected to", () => {
  it("the client hears only 'could not be downloaded'; the access line of its request id says why (ECONNREFUSED)", async () => {
    const port = await closedPort();
    const field = "messages[0].content[1].image_url.url";
    const body = { model: GEMINI, messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: `http://127.0.0.1:${port}/cat.png` } }] }] };
    const r = await postJson(`${baseURL}/chat/completions`, body, { authorization: `Bearer ${KEY}`, "x-request-id": "req-cause-1" });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toBe(`${field} could not be downloaded`);
    expect(r.text).not.toMatch(/ECONNREFUSED/);
    const [line] = await log.accessOnce((l) => l.requestId === "req-cause-1", 1);
    expect(line).toMatchObject({ requestId: "req-cause-1", status: 400, errorCode: "INVALID_REQUEST" });
    expect(line!.errorCause).toMatch(new RegExp(`ECONNREFUSED.*127\\.0\\.0\\.1:${port}`));
  });

  it("a refusal the client is told in full (a 404 from the image server) adds no errorCause", async () => {
    const body = { model: GEMINI, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `${gemini.baseUrl}/no-such-image.png` } }] }] };
    const r = await postJson(`${baseURL}/chat/completions`, body, { authorization: `Bearer ${KEY}`, "x-request-id": "req-cause-2" });
    expect(r.status, r.text).toBe(400);
    const [line] = await log.accessOnce((l) => l.requestId === "req-cause-2", 1);
    expect(line!.errorCause).toBeUndefined();
  });
});
