// An upstream stream that sends `data: {not json` after two content events, on every client protocol over every
// SSE upstream protocol (OpenAI chat, native Responses, Anthropic), read by the official SDKs: each raises the
// gateway's 502 UPSTREAM_ERROR (never a bare SyntaxError on the relayed frame, nor a 500 INTERNAL from a translator),
// the frame never reaches the client, a Responses stream's last two events are numbered on from the upstream's, and
// the ledger records the attempt as the provider's failure.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, type Loopback } from "./upstreams/http-fake.ts";

const KEY = testKey("badframe");
const BAD = "data: {not json\n\n";
const sse = (o: Record<string, unknown>, event?: string) => (event ? `event: ${event}\n` : "") + `data: ${JSON.stringify(o)}\n\n`;

/** Each upstream protocol's opening and two words, then the malformed frame; the body then ends. */
function frames(path: string): string {
  if (path.endsWith("/chat/completions")) {
    const c = (delta: unknown) => sse({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }] });
    return c({ role: "assistant", content: "" }) + c({ content: "Hello" }) + c({ content: " there" }) + BAD;
  }
  if (path.includes(":streamGenerateContent")) {
    const g = (text: string) => sse({ candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0 }], modelVersion: "m" });
    return g("Hello") + g(" there") + BAD;
  }
  if (path.endsWith("/responses")) {
    let seq = 0;
    const e = (type: string, o: Record<string, unknown>) => sse({ type, sequence_number: seq++, ...o }, type);
    const response = { id: "resp_1", object: "response", created_at: 1, status: "in_progress", model: "m", output: [], usage: null };
    const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
    return e("response.created", { response }) + e("response.in_progress", { response })
      + e("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } })
      + e("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } })
      + e("response.output_text.delta", { ...at, delta: "Hello" }) + e("response.output_text.delta", { ...at, delta: " there" })
      + "event: response.output_text.delta\n" + BAD;
  }
  const d = (text: string) => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta");
  return sse({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }, "message_start")
    + sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start")
    + d("Hello") + d(" there") + "event: content_block_delta\n" + BAD;
}

let up: Loopback;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  up = await listenLoopback((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(frames(req.url ?? ""));
    });
  });
  const model = (provider: string, extra: Record<string, unknown> = {}) => ({
    type: "language", context_window: 8000, max_tokens: 100,
    endpoints: [{ provider, model: "m", pricing: { input: "0.000001", output: "0.000002" }, ...extra }],
  });
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { max_attempts: 1 },
    providers: {
      oa: { protocol: "openai", base_url: `${up.origin}/v1`, api_key: "sk-fake" },
      an: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
      ge: { protocol: "gemini", base_url: up.origin, api_key: "g-fake" },
    },
    models: { "t/chat": model("oa"), "t/responses": model("oa", { native_responses: true }), "t/anthropic": model("an"), "t/gemini": model("ge") },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  openai = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const PROVIDER = { "t/chat": "oa", "t/responses": "oa", "t/anthropic": "an", "t/gemini": "ge" } as const;
type Model = keyof typeof PROVIDER;
const MODELS = Object.keys(PROVIDER) as Model[];
const hi = [{ role: "user" as const, content: "hi" }];

/** What the SDK threw, and the text it was given before (the words relayed). */
async function failure(read: () => Promise<AsyncIterable<unknown>>): Promise<{ err: any; seen: string }> {
  let seen = "";
  try {
    for await (const ev of await read()) seen += JSON.stringify(ev);
  } catch (err) {
    return { err, seen };
  }
  return { err: undefined, seen };
}

/** The gateway's error for the malformed frame, as each SDK holds it. */
const gatewayError = (model: Model) => ({ code: "UPSTREAM_ERROR", message: `Provider ${PROVIDER[model]} sent a stream event that is not JSON` });

async function ledgerOf(requestId: string) {
  return ledgerRecordOf(gw, requestId);
}

describe("an upstream stream event that is not JSON, through the official SDKs", () => {
  it.each(MODELS)("openai chat.completions on %s: APIError UPSTREAM_ERROR, the words before it relayed", async (model) => {
    const { err, seen } = await failure(() => openai.chat.completions.create({ model, stream: true, messages: hi }, { headers: { "x-request-id": `bad-chat-${model}` } }) as never);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.error).toMatchObject(gatewayError(model));
    expect(seen).toContain(" there");
    expect(await ledgerOf(`bad-chat-${model}`)).toMatchObject({ outcome: "stream_error", attemptList: [{ provider: PROVIDER[model], status: 502, error: "UPSTREAM_ERROR" }] });
  });

  it.each(MODELS)("openai responses on %s: APIError UPSTREAM_ERROR after response.failed", async (model) => {
    const { err, seen } = await failure(() => openai.responses.create({ model, stream: true, input: "hi" }, { headers: { "x-request-id": `bad-resp-${model}` } }) as never);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.error).toMatchObject(gatewayError(model));
    expect(seen).toContain('"type":"response.failed"');
    expect(await ledgerOf(`bad-resp-${model}`)).toMatchObject({ outcome: "stream_error", attemptList: [{ provider: PROVIDER[model], status: 502, error: "UPSTREAM_ERROR" }] });
  });

  it.each(MODELS)("anthropic messages on %s: APIError UPSTREAM_ERROR", async (model) => {
    const { err, seen } = await failure(() => anthropic.messages.create({ model, max_tokens: 50, stream: true, messages: hi }, { headers: { "x-request-id": `bad-msg-${model}` } }) as never);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBeUndefined(); // an error event mid-stream, after the 200
    expect(err.error).toMatchObject({ type: "error", error: { type: "api_error", ...gatewayError(model) } });
    expect(seen).toContain(" there");
    expect(await ledgerOf(`bad-msg-${model}`)).toMatchObject({ outcome: "stream_error", attemptList: [{ provider: PROVIDER[model], status: 502, error: "UPSTREAM_ERROR" }] });
  });

  it.each(MODELS)("on the wire, a Responses stream from %s never carries the frame and is numbered 0, 1, 2… to its response.failed and error", async (model) => {
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model, stream: true, input: "hi" }),
    });
    const text = await res.text();
    expect(text).not.toContain("{not json");
    const events = text.split("\n\n").filter(Boolean).map((block) => JSON.parse(block.split("\n").find((l) => l.startsWith("data: "))!.slice(6)));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.slice(-2).map((e) => e.type)).toEqual(["response.failed", "error"]);
    expect(events.at(-1)).toMatchObject({ code: "UPSTREAM_ERROR", error: gatewayError(model) });
  });

  it.each(MODELS)("on the wire, a Gemini client's stream from %s never carries the frame and ends with the gateway's error", async (model) => {
    // A Gemini stream's failure is cut after its error frame (core/http/respond.ts): read with node:http up to the cut.
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(`${gw.url}/api/v1beta/models/${model}:streamGenerateContent?alt=sse`, { method: "POST", headers: { "x-goog-api-key": KEY, "content-type": "application/json" } }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("error", () => {});
        res.on("close", () => resolve(body));
      });
      req.on("error", reject);
      req.end(JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }));
    });
    expect(text).toContain(" there");
    expect(text).not.toContain("{not json");
    const last = JSON.parse(text.trim().split(/\r?\n\r?\n/).at(-1)!.slice(6));
    expect(last).toMatchObject({ error: { code: 502, message: gatewayError(model).message } });
  });
});
