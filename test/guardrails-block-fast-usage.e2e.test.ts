// A block rule that stops a stream whose upstream wrote its whole answer at once: the upstream's usage (Anthropic's
// message_delta output_tokens, Gemini's last usageMetadata) came in the same read as the text the rule caught, so the
// ledger bills it, the same output and cost as the stream without the rule, not an estimate of the text before the
// match, and not marked estimated (the upstream's count was final: an OpenAI upstream's include_usage chunk too);
// output moderation refusing a complete answer at its end bills the same. A slow upstream still gets its refusal at
// once: the gateway never waits on it for data that has not come, and bills the estimate (the final count never came).
// Nothing is pulled from the stream after the refusal: a Responses mcp loop's blocked turn never runs its tool call,
// and an upstream failing right after the blocked text bills the estimate of what it generated, as without the rule.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { keyEntry, ledgerRecordOf, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { listenLoopback, readRequest, type Loopback } from "./upstreams/http-fake.ts";
import { eventFrame, FAKE_AWS } from "./upstreams/bedrock.ts";

const GUARDED = testKey("blockfast-guarded");
const PLAIN = testKey("blockfast-plain");
const MODERATED = testKey("blockfast-moderated");
const ANSWER = "Here it is: AKIAIOSFODNN7EXAMPLE and more text after the key to fill the window beyond sixty four chars ok.";
const WORDS = ANSWER.split(/(?<= )/);
const PRICES = { input: "0.000001", output: "0.000002" };

let up: Loopback;
let gw: TestGateway;
/** Slow mode: the upstream writes up to the key, then waits for this before the rest. */
let slow: { release: Promise<void> } | undefined;
/** Failing mode: the upstream writes up to the key's word, then an error event or a dropped connection. */
let failing: "error" | "cut" | undefined;
/** Tool mode: the Anthropic upstream's first turn also calls the MCP server's `record` tool with the key. */
let toolTurn = false;
/** The arguments of every call the MCP server got. */
const toolCalls: unknown[] = [];
let mcp: HttpServer;

const frame = (event: string | undefined, data: unknown) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

function anthropicFrames(model: string): string[] {
  return [
    frame("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
    frame("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ...WORDS.map((w) => frame("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: w } })),
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    ...(toolTurn ? [
      frame("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "rec__record", input: {} } }),
      frame("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: JSON.stringify({ key: "AKIAIOSFODNN7EXAMPLE" }) } }),
      frame("content_block_stop", { type: "content_block_stop", index: 1 }),
    ] : []),
    frame("message_delta", { type: "message_delta", delta: { stop_reason: toolTurn ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 30 } }),
    frame("message_stop", { type: "message_stop" }),
  ];
}

function openaiFrames(model: string): string[] {
  // OpenAI's include_usage chunk (no choices) after the finish: the answer's whole count.
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => frame(undefined, { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices, ...extra });
  return [
    ...WORDS.map((w, i) => chunk([{ index: 0, delta: i === 0 ? { role: "assistant", content: w } : { content: w }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], { usage: { prompt_tokens: 20, completion_tokens: 30, total_tokens: 50 } }),
    "data: [DONE]\n\n",
  ];
}

/** OpenAI's /moderations: flagged when the text holds the key. */
function moderation(body: any, res: ServerResponse): void {
  const flagged = JSON.stringify(body?.input ?? "").includes("AKIA");
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "modr-1", model: "omni-moderation-latest", results: [{ flagged, categories: { violence: flagged }, category_scores: { violence: flagged ? 0.9 : 0 } }] }));
}

function geminiFrames(): string[] {
  // Google's running usage on each chunk, the answer's count on the last one.
  const chunk = (text: string, last: boolean) => frame(undefined, {
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    usageMetadata: last ? { promptTokenCount: 20, candidatesTokenCount: 30, totalTokenCount: 50 } : { promptTokenCount: 20, totalTokenCount: 20 },
    modelVersion: "gemini-2.5-flash",
  });
  return WORDS.map((w, i) => chunk(w, i === WORDS.length - 1));
}

/** ConverseStream's binary frames (Nova on Bedrock): metadata, the answer's count, last. */
function converseFrames(): Uint8Array[] {
  return [
    eventFrame("messageStart", { role: "assistant" }),
    ...WORDS.map((w) => eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: w } })),
    eventFrame("contentBlockStop", { contentBlockIndex: 0 }),
    eventFrame("messageStop", { stopReason: "end_turn" }),
    eventFrame("metadata", { usage: { inputTokens: 20, outputTokens: 30, totalTokens: 50 }, metrics: { latencyMs: 100 } }),
  ];
}

/** The tool's result came back: the second turn answers without the key. */
function afterTool(body: any): boolean {
  return JSON.stringify(body.messages ?? []).includes("tool_result");
}

function doneFrames(model: string): string[] {
  return [
    frame("message_start", { type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
    frame("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    frame("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Recorded." } }),
    frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    frame("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }),
    frame("message_stop", { type: "message_stop" }),
  ];
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { path, body } = await readRequest(req);
  if (path.endsWith("/moderations")) return moderation(body, res);
  if (path.endsWith("/converse-stream")) return converseAnswer(res);
  const frames = path.includes(":streamGenerateContent") ? geminiFrames()
    : path.endsWith("/chat/completions") ? openaiFrames(body.model)
    : afterTool(body) ? doneFrames(body.model) : anthropicFrames(body.model);
  res.writeHead(200, { "content-type": "text/event-stream" });
  if (failing) {
    // Up to the key's word, then the upstream fails: no message_delta, no usage but message_start's.
    const upTo = frames.slice(0, frames.findIndex((f) => f.includes("AKIA")) + 1).join("");
    if (failing === "cut") return void res.write(upTo, () => res.socket?.destroy());
    return void res.end(upTo + frame("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
  }
  const s = slow;
  if (!s) return void res.end(frames.join(""));
  // Up to the key's word and a little after, then nothing until the test lets it go on.
  const cut = frames.findIndex((f) => f.includes("AKIA")) + 2;
  res.write(frames.slice(0, cut).join(""));
  await s.release;
  if (!res.destroyed) res.end(frames.slice(cut).join(""));
}

/** A Converse stream, all at once or (slow) up to the key's frame and one more, then the rest once released. */
async function converseAnswer(res: ServerResponse): Promise<void> {
  const frames = converseFrames();
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
  const s = slow;
  if (!s) return void res.end(Buffer.concat(frames));
  const cut = WORDS.findIndex((w) => w.includes("AKIA")) + 3;
  res.write(Buffer.concat(frames.slice(0, cut)));
  await s.release;
  if (!res.destroyed) res.end(Buffer.concat(frames.slice(cut)));
}

beforeAll(async () => {
  // An MCP server whose `record` tool notes every call it gets.
  mcp = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const server = new Server({ name: "rec", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "record", inputSchema: { type: "object", properties: { key: { type: "string" } } } }] }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      toolCalls.push(r.params.arguments);
      return { content: [{ type: "text", text: "recorded" }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res, chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined);
  });
  await new Promise<void>((r) => mcp.listen(0, "127.0.0.1", r));
  up = await listenLoopback((req, res) => void answer(req, res));
  const endpoints = (provider: string, model: string) => [{ provider, model, pricing: PRICES }];
  gw = await startTestGateway({
    providers: {
      claude: { protocol: "anthropic", base_url: up.origin, api_key: "sk-ant-fake" },
      gem: { protocol: "gemini", base_url: up.origin, api_key: "AIza-fake" },
      oai: { protocol: "openai", base_url: `${up.origin}/v1`, api_key: "sk-fake" },
      aws: { protocol: "bedrock", base_url: up.origin, region: FAKE_AWS.region, aws_access_key_id: FAKE_AWS.accessKeyId, aws_secret_access_key: FAKE_AWS.secretAccessKey },
    },
    models: {
      "anthropic/claude-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: endpoints("claude", "claude-x") },
      "google/gemini-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: endpoints("gem", "gemini-x") },
      "openai/gpt-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: endpoints("oai", "gpt-x") },
      "amazon/nova-x": { type: "language", context_window: 100_000, max_tokens: 1000, endpoints: endpoints("aws", "amazon.nova-pro-v1:0") },
    },
    mcp_servers: { rec: { url: `http://127.0.0.1:${(mcp.address() as { port: number }).port}/mcp`, timeout_ms: 5000 } },
    // Every failing stream here is a failure of the endpoint: the circuit stays closed for all of them.
    routing: { max_attempts: 1, circuit_breaker: { consecutive_failures: 1000, min_requests: 1000 } },
    projects: {
      guarded: {
        keys: [keyEntry("g", GUARDED)],
        guardrails: { rules: [{ name: "no-secrets", detect: ["secret"], on: ["output"], action: "block" }] },
      },
      plain: { keys: [keyEntry("p", PLAIN)] },
      moderated: { keys: [keyEntry("m", MODERATED)], guardrails: { moderation: { provider: "oai", on: ["output"] } } },
    },
  });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  mcp?.closeAllConnections();
  await new Promise((r) => mcp?.close(r));
});

type Client = "chat" | "messages" | "gemini" | "responses";

function request(client: Client, model: string): { path: string; body: Record<string, unknown> } {
  const messages = [{ role: "user", content: "SAYSECRET" }];
  if (client === "responses") {
    const tools = toolTurn ? [{ type: "mcp", server_label: "rec", require_approval: "never" }] : undefined;
    return { path: "/api/v1/responses", body: { model, stream: true, max_output_tokens: 1000, input: "SAYSECRET", ...(tools ? { tools } : {}) } };
  }
  if (client === "chat") return { path: "/api/v1/chat/completions", body: { model, stream: true, max_tokens: 1000, messages } };
  if (client === "messages") return { path: "/api/v1/messages", body: { model, stream: true, max_tokens: 1000, messages } };
  return { path: `/api/v1beta/models/${model}:streamGenerateContent?alt=sse`, body: { contents: [{ role: "user", parts: [{ text: "SAYSECRET" }] }] } };
}

/** One streamed request: what the client read, and its ledger record. */
async function streamed(client: Client, model: string, key: string) {
  const { path, body } = request(client, model);
  const res = await fetch(gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  // A refusal before any byte of the answer went out is the protocol's error answer (a Gemini client's, when the
  // window held every chunk); after that, the stream's error event.
  const text = await res.text();
  if (key === PLAIN && !failing) expect(res.status, text).toBe(200);
  return { text, entry: await requestRecordOf(res.headers.get("x-request-id")) };
}

/** The request's own ledger record (a moderation call's record shares its request id). */
async function requestRecordOf(requestId: string | null) {
  await ledgerRecordOf(gw, requestId);
  for (;;) {
    const e = (await gw.gateway.store.ledger({})).find((x) => x.requestId === requestId && x.endpoint !== "moderation");
    if (e) return e;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const PAIRS: [string, Client, string][] = [
  ["an Anthropic", "chat", "anthropic/claude-x"],
  ["an Anthropic", "messages", "anthropic/claude-x"],
  ["a Gemini", "gemini", "google/gemini-x"],
  ["a Gemini", "chat", "google/gemini-x"],
  ["an OpenAI", "chat", "openai/gpt-x"],
  ["an OpenAI", "messages", "openai/gpt-x"],
  ["a Bedrock Converse", "chat", "amazon/nova-x"],
  ["a Bedrock Converse", "messages", "amazon/nova-x"],
];

describe.each(PAIRS)("%s upstream that writes its whole stream at once, a %s client", (_, client, model) => {
  it("a block rule's refusal bills the upstream's reported usage, as the stream without the rule does", async () => {
    slow = undefined;
    const plain = await streamed(client, model, PLAIN);
    const guarded = await streamed(client, model, GUARDED);
    expect(plain.entry).toMatchObject({ outcome: "ok", inputTokens: 20, outputTokens: 30 });
    expect(guarded.text).not.toContain("AKIA");
    expect(guarded.text).toContain("no-secrets");
    // The upstream's final count came before the refusal: billed as reported, not topped up with an estimate.
    expect(plain.entry).toMatchObject({ outputTokens: 30, estimated: false });
    expect(guarded.entry).toMatchObject({ outcome: "blocked", inputTokens: 20, outputTokens: 30, costUsd: plain.entry.costUsd, estimated: false });
  });

  it("output moderation blocking the complete answer at its end bills the upstream's reported usage", async () => {
    slow = undefined;
    const plain = await streamed(client, model, PLAIN);
    const moderated = await streamed(client, model, MODERATED);
    expect(moderated.text).toContain("moderation");
    expect(moderated.entry).toMatchObject({ outcome: "blocked", inputTokens: 20, outputTokens: 30, costUsd: plain.entry.costUsd, estimated: false });
  });
});

describe("a slow upstream stopped by a block rule", () => {
  it.each([["anthropic/claude-x", "messages"], ["google/gemini-x", "gemini"], ["amazon/nova-x", "chat"]] as const)("%s to a %s client: the refusal goes out while the upstream still holds the rest", async (model, client) => {
    let release!: () => void;
    slow = { release: new Promise<void>((r) => (release = r)) };
    try {
      // The upstream sends the rest only once it is released: a refusal that waited for it would never come.
      const { text, entry } = await streamed(client, model, GUARDED);
      expect(text).not.toContain("AKIA");
      expect(text).toContain("no-secrets");
      expect(entry.outcome).toBe("blocked");
      // The final usage never came before the refusal: the estimate of the text generated, as for any cut stream.
      expect(entry.outputTokens).toBeLessThan(30);
      expect(entry.estimated).toBe(true);
    } finally {
      release();
      slow = undefined;
    }
  });
});

describe("nothing is pulled from a blocked stream", () => {
  it("a Responses mcp loop whose turn a block rule stopped never runs that turn's tool call (the key in its arguments)", async () => {
    toolTurn = true;
    try {
      // Without the rule the same turn's call runs: the check below can fail.
      const plain = await streamed("responses", "anthropic/claude-x", PLAIN);
      expect(plain.text).toContain("Recorded.");
      expect(toolCalls).toEqual([{ key: "AKIAIOSFODNN7EXAMPLE" }]);
      toolCalls.length = 0;
      const guarded = await streamed("responses", "anthropic/claude-x", GUARDED);
      expect(guarded.text).toContain("no-secrets");
      expect(guarded.text).not.toContain("AKIA");
      expect(guarded.entry.outcome).toBe("blocked");
      expect(toolCalls).toEqual([]);
    } finally {
      toolTurn = false;
    }
  });

  it.each([["error", "responses"], ["cut", "responses"], ["error", "chat"]] as const)("an upstream failing (%s) right after the blocked text, a translated %s client: billed the estimate, as without the rule", async (how, client) => {
    failing = how;
    try {
      const plain = await streamed(client, "anthropic/claude-x", PLAIN);
      const guarded = await streamed(client, "anthropic/claude-x", GUARDED);
      expect(plain.entry).toMatchObject({ outcome: "stream_error", estimated: true });
      expect(guarded.text).not.toContain("AKIA");
      // message_start's output_tokens (1) is no final count: the text generated is what is billed.
      expect(plain.entry.outputTokens).toBeGreaterThan(1);
      expect(guarded.entry).toMatchObject({ outcome: "blocked", estimated: true, inputTokens: plain.entry.inputTokens, outputTokens: plain.entry.outputTokens, costUsd: plain.entry.costUsd });
    } finally {
      failing = undefined;
    }
  });
});
