// A Responses answer under output moderation is stored only once the verdict is known: while the moderation model
// judges it, the id a stream's response.created gave is a 404 (not the answer it may yet refuse), a refused answer is
// never written (so a store that fails to delete cannot leave it behind), and a refused answer a native OpenAI model
// gave has OpenAI's own copy deleted, as DELETE /v1/responses/{id} does: after the refusal went out (the client never
// waits for it), and even when the client left meanwhile. The answer judged is the one the client was streamed, also
// when the stream's final event carries none of it.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ServerResponse } from "node:http";
import { SseParser, type SseEvent } from "../core/sse/parse.ts";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./upstreams/openai.ts";
import { startFakeOpenAIResponses, type FakeOpenAIWithResponses } from "./upstreams/openai-responses.ts";
import { keyEntry, startTestGateway, testKey, type TestGateway } from "./helpers/gateway.ts";
import { until } from "./helpers/until.ts";

const KEY = testKey("moderated-store");
const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}` };

let chat: FakeOpenAI;
let native: FakeOpenAIWithResponses;
let mod: FakeOpenAI;
let gw: TestGateway;
/** Moderation answers wait for this while set (the test lets them go). */
let hold: Promise<void> | undefined;
/** OpenAI's DELETE /v1/responses/{id} answers only once this settles, while set (then as `deleteStatus` says). */
let deleteHold: Promise<void> | undefined;
let deleteStatus = 200;
/** The native model's answer: each test its own, so no verdict is reused from an earlier one (moderation/cache.ts). */
let nativeText = "The knight came to kill the dragon.";

const sse = (type: string, o: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;

/** A native stream as OpenAI may send it: the text in deltas, then response.completed saying output: []. */
function emptyFinal(req: RecordedRequest, res: ServerResponse): boolean {
  if (req.method !== "POST" || req.path !== "/v1/responses" || !JSON.stringify(req.body?.input).includes("(empty final)")) return false;
  const id = `resp_emptyfinal${Date.now()}`;
  const base = { id, object: "response", created_at: 1, status: "in_progress", model: "gpt-5", output: [], usage: null };
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  const text = "The knight came to kill the dragon at dawn.";
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(
    sse("response.created", { sequence_number: 0, response: base }) +
      sse("response.output_item.added", { sequence_number: 1, output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } }) +
      sse("response.content_part.added", { sequence_number: 2, ...at, part: { type: "output_text", text: "", annotations: [] } }) +
      sse("response.output_text.delta", { sequence_number: 3, ...at, delta: text }) +
      sse("response.output_text.done", { sequence_number: 4, ...at, text }) +
      sse("response.completed", { sequence_number: 5, response: { ...base, status: "completed", usage: { input_tokens: 5, output_tokens: 8, total_tokens: 13 } } }),
  );
  return true;
}

/** OpenAI's /moderations: flags an answer that mentions "kill". */
function moderations(req: RecordedRequest, res: ServerResponse): boolean {
  if (req.path !== "/v1/moderations") return false;
  const flagged = String(req.body?.input ?? "").includes("kill");
  void (hold ?? Promise.resolve()).then(() => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "modr-1", model: "omni-moderation-latest", results: [{ flagged, categories: { violence: flagged }, category_scores: { violence: flagged ? 0.9 : 0 } }] }));
  });
  return true;
}

beforeAll(async () => {
  chat = await startFakeOpenAI();
  chat.piecesFor = () => ["Once the knight ", "came to kill the dragon."];
  native = await startFakeOpenAIResponses();
  native.script = () => ({ text: nativeText });
  const served = native.hook!;
  native.hook = (req, res) => {
    if (emptyFinal(req, res)) return true;
    if (req.method === "DELETE" && (deleteHold || deleteStatus !== 200)) {
      void (deleteHold ?? Promise.resolve()).then(() => {
        if (deleteStatus === 200) return void served(req, res);
        res.writeHead(deleteStatus, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "The server had an error", type: "server_error", param: null, code: null } }));
      });
      return true;
    }
    return served(req, res);
  };
  mod = await startFakeOpenAI();
  mod.hook = moderations;
  const pricing = { input: "0.000001", output: "0.000002" };
  gw = await startTestGateway({
    providers: {
      chat: { protocol: "openai", base_url: chat.baseUrl, api_key: "sk-fake-upstream" },
      native: { protocol: "openai", base_url: native.baseUrl, api_key: "sk-fake-upstream" },
      mod: { protocol: "openai", base_url: mod.baseUrl, api_key: "sk-fake-upstream" },
    },
    models: {
      "openai/gpt-4o-mini": { type: "language", endpoints: [{ provider: "chat", model: "gpt-4o-mini", pricing }] },
      "openai/gpt-5": { type: "language", endpoints: [{ provider: "native", model: "gpt-5", native_responses: true, pricing }] },
    },
    projects: { acme: { keys: [keyEntry("k", KEY)], guardrails: { moderation: { provider: "mod", on: ["output"], timeout_ms: 20_000 } } } },
  });
});
afterAll(async () => {
  await gw?.close();
  await chat?.close();
  await native?.close();
  await mod?.close();
});

const status = async (id: string) => (await fetch(`${gw.url}/api/v1/responses/${id}`, { headers })).status;
const outputModerations = () => mod.requests.filter((r) => r.path === "/v1/moderations").length;

const deletesAtOpenAI = () => native.requests.filter((r) => r.method === "DELETE");

/** A streamed create, read event by event. */
async function streamed(body: Record<string, unknown>, signal?: AbortSignal) {
  const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ stream: true, ...body }), signal });
  const reader = res.body!.getReader();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const seen: SseEvent[] = [];
  let done = false;
  /** Events until one `pick` accepts (or the stream's end). */
  const next = async (pick: (e: SseEvent) => boolean): Promise<SseEvent | undefined> => {
    for (;;) {
      const hit = seen.find(pick);
      if (hit || done) return hit;
      const chunk = await reader.read();
      if (chunk.done) done = true;
      else seen.push(...parser.push(decoder.decode(chunk.value, { stream: true })));
    }
  };
  return { status: res.status, next, seen };
}

describe("a Responses answer under output moderation", () => {
  it("is not readable by its id while the moderation judges it, nor after it refused the answer", async () => {
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    try {
      const before = outputModerations();
      const s = await streamed({ model: "openai/gpt-4o-mini", input: "tell me a story (slow moderation)" });
      expect(s.status).toBe(200);
      const created = await s.next((e) => e.event === "response.created");
      const id = JSON.parse(created!.data).response.id as string;
      await until("the answer's moderation call", async () => (outputModerations() > before ? true : undefined));
      expect(await status(id)).toBe(404); // not the answer the moderation is about to refuse
      release();
      const error = await s.next((e) => e.data.includes("GUARDRAIL_BLOCKED"));
      expect(error).toBeDefined();
      expect(s.seen.some((e) => e.event === "response.completed")).toBe(false);
      expect(await status(id)).toBe(404);
    } finally {
      hold = undefined;
      release?.();
    }
  });

  it("refused is never written, so a store that cannot delete leaves nothing behind", async () => {
    const store = gw.gateway.store.responses;
    const put = vi.spyOn(store, "put");
    const del = vi.spyOn(store, "delete").mockRejectedValue(new Error("database is locked"));
    try {
      const s = await streamed({ model: "openai/gpt-4o-mini", input: "tell me a story (store cannot delete)" });
      const id = JSON.parse((await s.next((e) => e.event === "response.created"))!.data).response.id as string;
      expect(await s.next((e) => e.data.includes("GUARDRAIL_BLOCKED"))).toBeDefined();
      const json = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "openai/gpt-4o-mini", input: "tell me a story (JSON)" }) });
      expect(json.status).toBe(400);
      expect(put).not.toHaveBeenCalled();
      del.mockRestore();
      expect(await status(id)).toBe(404);
    } finally {
      put.mockRestore();
      del.mockRestore();
    }
  });

  it("refused from a native OpenAI model has OpenAI's own copy deleted too", async () => {
    const judged = outputModerations();
    const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "openai/gpt-5", input: "tell me a story (native)" }) });
    const raw = await res.text();
    expect(res.status, raw).toBe(400);
    expect(raw).toContain("GUARDRAIL_BLOCKED");
    const made = native.requests.filter((r) => r.method === "POST" && r.path === "/v1/responses").at(-1)!;
    expect(made).toBeDefined();
    const deletes = await until("the delete at OpenAI", async () => (deletesAtOpenAI().length ? deletesAtOpenAI() : undefined));
    expect(deletes.length).toBe(1);
    const id = deletes[0]!.path.split("/").at(-1)!;
    expect(id).toMatch(/^resp_/);
    expect(native.responses.stored.has(id)).toBe(false);
    expect(await status(id)).toBe(404);
    expect(outputModerations()).toBe(judged + 1); // one call (and one bill) for the record and the client's answer
  });

  it("judges the text a native stream sent, when its final event says output: []", async () => {
    const judged = outputModerations();
    const s = await streamed({ model: "openai/gpt-5", input: "tell me a story (empty final)" });
    expect(s.status).toBe(200);
    const id = JSON.parse((await s.next((e) => e.event === "response.created"))!.data).response.id as string;
    expect(await s.next((e) => e.data.includes("GUARDRAIL_BLOCKED"))).toBeDefined();
    expect(s.seen.some((e) => e.event === "response.completed")).toBe(false);
    const asked = mod.requests.filter((r) => r.path === "/v1/moderations").slice(judged);
    expect(asked.map((r) => r.body?.input)).toEqual(["The knight came to kill the dragon at dawn."]); // one call, on what was streamed
    expect(await status(id)).toBe(404);
  });

  it("refuses a native answer without waiting for OpenAI's delete of its copy", async () => {
    let release!: () => void;
    deleteHold = new Promise<void>((r) => (release = r));
    nativeText = "The knight came to kill the dragon at noon.";
    const before = deletesAtOpenAI().length;
    try {
      const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "openai/gpt-5", input: "tell me a story (slow delete)" }) });
      // Answered while OpenAI has not answered the delete (it answers only once released below).
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("GUARDRAIL_BLOCKED");
      release();
      const sent = await until("the delete at OpenAI", async () => deletesAtOpenAI()[before]);
      await until("OpenAI's copy gone", async () => (native.responses.stored.has(sent.path.split("/").at(-1)!) ? undefined : true));
    } finally {
      deleteHold = undefined;
      release?.();
    }
  });

  it("logs a failed delete of a refused answer's copy as kept at OpenAI, not as a record kept here", async () => {
    const error = vi.spyOn(gw.gateway.log, "error");
    deleteStatus = 500;
    nativeText = "The knight came to kill the dragon at dusk.";
    try {
      const res = await fetch(`${gw.url}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "openai/gpt-5", input: "tell me a story (delete fails)" }) });
      expect(res.status).toBe(400);
      const [message, fields] = await until("the failure logged", async () => error.mock.calls.find((c) => String(c[0]).includes("copy")));
      const said = `${message} ${JSON.stringify(fields)}`;
      expect(said).toContain("native");
      expect(said).not.toContain("kept here");
    } finally {
      deleteStatus = 200;
      error.mockRestore();
    }
  });

  it("deletes OpenAI's copy of a refused answer also when the client left during the moderation", async () => {
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    const leave = new AbortController();
    nativeText = "The knight came to kill the dragon at night.";
    const judged = outputModerations();
    try {
      const s = await streamed({ model: "openai/gpt-5", input: "tell me a story (client leaves)" }, leave.signal);
      const id = JSON.parse((await s.next((e) => e.event === "response.created"))!.data).response.id as string;
      await until("the answer's moderation call", async () => (outputModerations() > judged ? true : undefined));
      leave.abort();
      // The gateway saw the client go: the moderation call it was waiting on is cancelled (fail_closed: refused).
      await until("the moderation call cancelled", async () => mod.requests.filter((r) => r.path === "/v1/moderations")[judged]!.abortedAt);
      release();
      const sent = await until("the delete at OpenAI", async () => deletesAtOpenAI().find((r) => r.path.endsWith(`/${id}`)));
      expect(sent.abortedAt).toBeUndefined();
      await until("OpenAI's copy gone", async () => (native.responses.stored.has(id) ? undefined : true));
      expect(await status(id)).toBe(404);
    } finally {
      hold = undefined;
      release?.();
    }
  });
});
