// Upstream answers framed as HTTP and SSE allow, though the fakes never wrote them so: compressed bodies (a proxy
// that compresses whatever it was asked, in front of the fake OpenAI, Anthropic and Bedrock), chunks spaced as
// Python's json.dumps writes them, and events whose JSON is split over several `data:` lines. The clients are the
// official openai and @anthropic-ai/sdk packages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { pipeline, type Transform } from "node:stream";
import { createBrotliCompress, createDeflate, createGzip } from "node:zlib";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, type Loopback } from "./upstreams/http-fake.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./upstreams/openai.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./upstreams/anthropic.ts";
import { BEDROCK_TEXT, FAKE_AWS, startFakeBedrock, type FakeBedrock } from "./upstreams/bedrock.ts";

const KEY = testKey("upframing");
const CODINGS: Record<string, () => Transform> = { gzip: createGzip, br: createBrotliCompress, deflate: createDeflate };

/** A reverse proxy that answers with `coding`, whatever the request's Accept-Encoding; it records that header. */
interface CompressingProxy extends Loopback {
  coding: string;
  /** The Content-Encoding it claims, when not `coding`'s. */
  label?: string;
  acceptEncodings: (string | undefined)[];
  /** `baseUrl` of the upstream behind it, through the proxy. */
  via(baseUrl: string): string;
}

async function compressingProxy(target: string): Promise<CompressingProxy> {
  const to = new URL(target);
  const proxy = {} as CompressingProxy;
  const lb = await listenLoopback((req: IncomingMessage, res: ServerResponse) => {
    proxy.acceptEncodings.push(req.headers["accept-encoding"]);
    // Headers as they came (the host too: the fake Bedrock checks the SigV4 signature over it).
    const up = httpRequest({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      const headers = { ...answer.headers, "content-encoding": proxy.label ?? proxy.coding };
      delete headers["content-length"];
      delete headers["transfer-encoding"];
      res.writeHead(answer.statusCode!, headers);
      pipeline(answer, CODINGS[proxy.coding]!(), res, () => {});
    });
    pipeline(req, up, () => {});
  });
  return Object.assign(proxy, lb, { coding: "gzip", acceptEncodings: [], via: (baseUrl: string) => lb.origin + new URL(baseUrl).pathname.replace(/\/$/, "") });
}

/** JSON as Python's json.dumps writes it: ", " and ": " between tokens. */
const spaced = (v: unknown): string => JSON.stringify(v, null, 1).replace(/\n */g, " ").replace(/([[{]) /g, "$1").replace(/ ([\]}])/g, "$1");

let openaiUp: FakeOpenAI;
let anthropicUp: FakeAnthropic;
let bedrockUp: FakeBedrock;
/** An OpenAI-protocol host that is not OpenAI (a vLLM or a Python proxy): its own framing, per test. */
let hostUp: FakeOpenAI;
let hostFrames: (body: any) => string;
const proxies: CompressingProxy[] = [];
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [openaiUp, anthropicUp, bedrockUp, hostUp] = await Promise.all([startFakeOpenAI({ text: "compressed hello" }), startFakeAnthropic(), startFakeBedrock(), startFakeOpenAI()]);
  hostUp.hook = (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(hostFrames(req.body));
    return true;
  };
  const [po, pa, pb] = await Promise.all([openaiUp.baseUrl, anthropicUp.baseUrl, bedrockUp.baseUrl].map(compressingProxy));
  proxies.push(po!, pa!, pb!);
  const price = { input: "0.000001", output: "0.000002" };
  gw = await startTestGateway({
    store: { kind: "memory" },
    routing: { max_attempts: 1 },
    providers: {
      oai: { protocol: "openai", base_url: po!.via(openaiUp.baseUrl), api_key: "sk-fake-upstream" },
      ant: { protocol: "anthropic", base_url: pa!.via(anthropicUp.baseUrl), api_key: FAKE_ANTHROPIC_KEY },
      bed: { protocol: "bedrock", region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey, base_url: pb!.via(bedrockUp.baseUrl) },
      host: { protocol: "openai", base_url: hostUp.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "test/oai": { type: "language", endpoints: [{ provider: "oai", model: "gpt-4o-mini", pricing: price }] },
      "test/ant": { type: "language", max_tokens: 4096, endpoints: [{ provider: "ant", model: "claude-sonnet-4-5-20250929", pricing: price }] },
      "test/bed": { type: "language", endpoints: [{ provider: "bed", model: "us.meta.llama3-3-70b-instruct-v1:0", pricing: price }] },
      "test/host": { type: "language", max_tokens: 32000, endpoints: [{ provider: "host", model: "m", pricing: price }] },
    },
    projects: { p: { keys: [keyEntry("k", KEY)] } },
  });
  openai = new OpenAI({ apiKey: KEY, baseURL: gw.baseURL, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: KEY, baseURL: `${gw.url}/api`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([...proxies.map((p) => p.close()), openaiUp?.close(), anthropicUp?.close(), bedrockUp?.close(), hostUp?.close()]);
});

const ask = [{ role: "user" as const, content: "hi" }];

describe("compressed upstream answers", () => {
  it("gzip, br and deflate answers (JSON, SSE, Bedrock's event stream) are decoded; the gateway asks for identity", async () => {
    for (const coding of Object.keys(CODINGS)) {
      for (const p of proxies) p.coding = coding;
      const json = await openai.chat.completions.create({ model: "test/oai", messages: ask });
      expect([coding, json.choices[0]!.message.content]).toEqual([coding, "compressed hello"]);
      let text = "";
      for await (const c of await openai.chat.completions.create({ model: "test/oai", messages: ask, stream: true })) text += c.choices[0]?.delta.content ?? "";
      expect([coding, text]).toEqual([coding, "compressed hello"]);
      const message = await anthropic.messages.create({ model: "test/ant", max_tokens: 100, messages: ask });
      expect(message.content[0]).toMatchObject({ type: "text", text: expect.any(String) });
      let bedrock = "";
      for await (const c of await openai.chat.completions.create({ model: "test/bed", messages: ask, stream: true })) bedrock += c.choices[0]?.delta.content ?? "";
      expect([coding, bedrock]).toEqual([coding, BEDROCK_TEXT]);
    }
    const asked = proxies.flatMap((p) => p.acceptEncodings);
    expect(asked.length).toBeGreaterThanOrEqual(12);
    expect(new Set(asked)).toEqual(new Set(["identity"]));
  });

  it("an answer that does not decode is a clear upstream error, not 'could not reach'", async () => {
    // Gzipped, labelled br: the gateway's brotli decoder refuses it.
    Object.assign(proxies[0]!, { coding: "gzip", label: "br" });
    try {
      const res = await fetch(`${gw.baseURL}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "test/oai", messages: ask }) });
      expect(res.status).toBe(502);
      expect((await res.json()).error.message).toContain("Provider oai sent a br answer that does not decode");
    } finally {
      proxies[0]!.label = undefined;
    }
  });
});

describe("an OpenAI-protocol host with its own JSON framing", () => {
  const base = { id: "chatcmpl-host", object: "chat.completion.chunk", created: 1, model: "m" };
  const chunks = (body: any, encode: (v: unknown) => string) => [
    { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: "thought hard" }, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
    // 5000 completion tokens, nearly all hidden reasoning: billed on the two visible words when this chunk is missed.
    ...(body.stream_options?.include_usage ? [{ ...base, choices: [], usage: { prompt_tokens: 8, completion_tokens: 5000, total_tokens: 5008 } }] : []),
  ].map((c) => `data: ${encode(c)}\n\n`).join("") + "data: [DONE]\n\n";

  it("spaced usage (json.dumps) is billed, and its chunk does not reach a client that did not ask for it", async () => {
    hostFrames = (body) => chunks(body, spaced);
    const raw = await fetch(`${gw.baseURL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": "req-spaced-usage" },
      body: JSON.stringify({ model: "test/host", stream: true, messages: ask }),
    });
    const text = await raw.text();
    expect(text).toContain("thought hard");
    expect(text).not.toContain('"usage": {');
    const record = await ledgerRecordOf(gw, "req-spaced-usage");
    expect(record).toMatchObject({ inputTokens: 8, outputTokens: 5000, estimated: false });
  });

  it("an event split over several data: lines reaches the openai SDK as one event (it threw SyntaxError)", async () => {
    // Pretty-printed JSON, one data: line per line: legal SSE, which the gateway's parser joins with "\n".
    hostFrames = (body) => chunks(body, (v) => JSON.stringify(v, null, 1).split("\n").join("\ndata: "));
    let text = "";
    let usage: unknown;
    for await (const c of await openai.chat.completions.create({ model: "test/host", messages: ask, stream: true, stream_options: { include_usage: true } })) {
      text += c.choices[0]?.delta.content ?? "";
      if (c.usage) usage = c.usage;
    }
    expect(text).toBe("thought hard");
    expect(usage).toMatchObject({ completion_tokens: 5000 });
  });
});
