// The access line's `stream` says whether the request asked for a stream, also where it was refused before any
// answer. A chat request says so in its body; a Gemini one by its URL's method (:streamGenerateContent), and a stored
// Responses answer by ?stream=true: those two read `false` when refused, where a refused chat stream read `true`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEntry, testKey } from "./helpers/gateway.ts";
import { startLoggedGateway, type CapturedLog } from "./helpers/log-capture.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import type { RunningGateway } from "../core/server.ts";

const KEY = testKey("refusedstream");

let fake: FakeOpenAI;
let gw: RunningGateway;
let log: CapturedLog;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  ({ gw, log } = await startLoggedGateway({
    store: { kind: "memory" },
    providers: { up: { protocol: "openai", base_url: fake.baseUrl, api_key: "sk-fake-upstream" } },
    models: { "test/m": { endpoints: [{ provider: "up", model: "m" }] } },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  }, {}, "info"));
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** Sends the request and returns its status and its access line's `stream`. */
async function streamLogged(method: string, path: string, body?: unknown): Promise<{ status: number; stream: unknown }> {
  const requestId = `refused-stream-${Math.random().toString(36).slice(2)}`;
  const res = await fetch(`${gw.url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "x-goog-api-key": KEY, "content-type": "application/json", "x-request-id": requestId },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.text();
  const [line] = await log.accessOnce((l) => l.requestId === requestId, 1);
  return { status: res.status, stream: line?.stream };
}

const badGemini = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { temperature: "hot" } };

describe("the access line of a request refused before answering says whether it asked for a stream", () => {
  it("chat: stream: true in the body", async () => {
    expect(await streamLogged("POST", "/v1/chat/completions", { model: "test/m", stream: true, temperature: "hot", messages: [{ role: "user", content: "hi" }] })).toEqual({ status: 400, stream: true });
  });

  it("Gemini :streamGenerateContent refused for its body or for want of ?alt=sse; :generateContent is not a stream", async () => {
    expect(await streamLogged("POST", "/v1beta/models/test/m:streamGenerateContent?alt=sse", badGemini)).toEqual({ status: 400, stream: true });
    expect(await streamLogged("POST", "/v1beta/models/test/m:streamGenerateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] })).toEqual({ status: 400, stream: true });
    expect(await streamLogged("POST", "/v1beta/models/test/m:generateContent", badGemini)).toEqual({ status: 400, stream: false });
  });

  it("a stored Responses answer asked for with ?stream=true that is not there", async () => {
    expect(await streamLogged("GET", "/v1/responses/resp_nothere?stream=true")).toEqual({ status: 404, stream: true });
    expect(await streamLogged("GET", "/v1/responses/resp_nothere")).toEqual({ status: 404, stream: false });
  });
});
