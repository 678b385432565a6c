// A hostile (or broken) upstream for issue 25, speaking both the OpenAI chat protocol (POST /v1/chat/completions) and
// Anthropic's (POST /v1/messages) with the real APIs' framing — text/event-stream, `data:` frames (and `event:` names
// on Anthropic), blank-line separators, [DONE] / message_stop — but with one of two faults, chosen by the upstream
// model id the gateway sends:
//   "long-line"        a stream that starts normally (two content events), then sends one `data:` line of
//                      LONG_LINE_BYTES (32 MiB) that never ends until all of it is written;
//   "long-line-first"  the same line as the very first thing on the stream;
//                      asked for JSON (no `stream`), either one answers with a JSON body of LONG_LINE_BYTES;
//   "no-usage"         a well-formed answer (stream or JSON) that carries no usage at all, even when the gateway asks
//                      for it (stream_options.include_usage): NO_USAGE_TEXT, 6 900 characters in 12 content events.
// For each long line it records how many bytes went out and whether the gateway dropped the connection first.
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenLoopback, readRequest } from "./http-fake.ts";

export const LONG_LINE_BYTES = 32 * 1024 * 1024;

const SENTENCE = "The upstream answered at length but never said how many tokens it used, so the gateway has to estimate. ";
/** 6 900 characters of prose: the answer of every "no-usage" request. */
export const NO_USAGE_TEXT = SENTENCE.repeat(Math.ceil(6900 / SENTENCE.length)).slice(0, 6900);
/** NO_USAGE_TEXT in 12 content events, as the issue saw it billed (one token an event). */
const NO_USAGE_PIECES = Array.from({ length: 12 }, (_, i) => NO_USAGE_TEXT.slice(i * 575, (i + 1) * 575));

export interface LongLineRecord {
  protocol: "chat" | "messages";
  /** Bytes of the long line written before the connection went away (or all of them). */
  written: number;
  /** The gateway closed the connection before the line was complete. */
  droppedEarly: boolean;
  /** Resolves when this response is over, one way or the other. */
  done: Promise<void>;
}

export interface HostileStreamUpstream {
  /** Base URL including /v1 (providers.<name>.base_url for both protocols). */
  baseUrl: string;
  requests: { path: string; body: any }[];
  longLines: LongLineRecord[];
  close(): Promise<void>;
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" };

/** Writes `bytes` of "a" (64 KiB at a time, waiting for drain) unless the connection goes first. */
async function pour(res: ServerResponse, rec: LongLineRecord, bytes: number): Promise<void> {
  const piece = Buffer.alloc(64 * 1024, "a");
  while (rec.written < bytes) {
    if (res.destroyed || !res.writable) {
      rec.droppedEarly = true;
      return;
    }
    const n = Math.min(piece.length, bytes - rec.written);
    const ok = res.write(n === piece.length ? piece : piece.subarray(0, n));
    rec.written += n;
    if (!ok) {
      const drained = await new Promise<boolean>((resolve) => {
        const onDrain = () => { res.off("close", onClose); resolve(true); };
        const onClose = () => { res.off("drain", onDrain); resolve(false); };
        res.once("drain", onDrain);
        res.once("close", onClose);
      });
      if (!drained) {
        rec.droppedEarly = true;
        return;
      }
    }
  }
}

export async function startHostileStreamUpstream(): Promise<HostileStreamUpstream> {
  const up: HostileStreamUpstream = { baseUrl: "", requests: [], longLines: [], close: async () => {} };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, body } = await readRequest(req);
    up.requests.push({ path, body });
    // Writes after the gateway hung up fail with EPIPE / ECONNRESET: expected here, never a test-process crash.
    res.on("error", () => {});
    req.socket.on("error", () => {});
    const messages = path === "/v1/messages";
    if (path !== "/v1/chat/completions" && !messages) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `Unknown request URL: POST ${path}`, type: "invalid_request_error", code: "unknown_url" } }));
      return;
    }
    const model = String(body?.model ?? "");
    const stream = body?.stream === true;
    if (model === "no-usage") return messages ? noUsageMessages(res, model, stream) : noUsageChat(res, model, stream);
    if (model === "long-line" || model === "long-line-first") return stream ? longLine(res, messages, model === "long-line-first") : longJson(res, messages);
    res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `The model \`${model}\` does not exist`, type: "invalid_request_error", code: "model_not_found" } }));
  }

  function record(messages: boolean): { rec: LongLineRecord; closeDone: () => void } {
    let closeDone!: () => void;
    const rec: LongLineRecord = { protocol: messages ? "messages" : "chat", written: 0, droppedEarly: false, done: new Promise((r) => (closeDone = r)) };
    up.longLines.push(rec);
    return { rec, closeDone };
  }

  /** A JSON answer whose one text is LONG_LINE_BYTES long (chunked: no Content-Length to refuse it by). */
  async function longJson(res: ServerResponse, messages: boolean): Promise<void> {
    const { rec, closeDone } = record(messages);
    res.writeHead(200, { "content-type": "application/json" });
    res.write(messages
      ? '{"id":"msg_hostile","type":"message","role":"assistant","model":"long-line","content":[{"type":"text","text":"'
      : '{"id":"chatcmpl-hostile","object":"chat.completion","created":1,"model":"long-line","choices":[{"index":0,"message":{"role":"assistant","content":"');
    await pour(res, rec, LONG_LINE_BYTES);
    if (!rec.droppedEarly && !res.destroyed) {
      res.end(messages
        ? '"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}'
        : '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}');
    }
    closeDone();
  }

  async function longLine(res: ServerResponse, messages: boolean, first: boolean): Promise<void> {
    const { rec, closeDone } = record(messages);
    res.writeHead(200, SSE_HEADERS);
    if (messages) {
      const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      if (!first) {
        res.write(ev("message_start", { message: { id: "msg_hostile", type: "message", role: "assistant", model: "long-line", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }));
        res.write(ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
        res.write(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Here it comes: " } }));
      }
      res.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"');
    } else {
      const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: "chatcmpl-hostile", object: "chat.completion.chunk", created: 1, model: "long-line", choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] })}\n\n`;
      if (!first) res.write(chunk({ role: "assistant", content: "" }) + chunk({ content: "Here it comes: " }));
      res.write('data: {"id":"chatcmpl-hostile","object":"chat.completion.chunk","created":1,"model":"long-line","choices":[{"index":0,"delta":{"content":"');
    }
    await pour(res, rec, LONG_LINE_BYTES);
    if (!rec.droppedEarly && !res.destroyed) res.end(messages ? '"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n' : '"}}]}\n\ndata: [DONE]\n\n');
    closeDone();
  }

  function noUsageChat(res: ServerResponse, model: string, stream: boolean): void {
    const id = "chatcmpl-nousage";
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id, object: "chat.completion", created: 1, model, choices: [{ index: 0, message: { role: "assistant", content: NO_USAGE_TEXT, refusal: null }, logprobs: null, finish_reason: "stop" }] }));
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
    res.end([chunk({ role: "assistant", content: "" }), ...NO_USAGE_PIECES.map((p) => chunk({ content: p })), chunk({}, "stop"), "data: [DONE]\n\n"].join(""));
  }

  function noUsageMessages(res: ServerResponse, model: string, stream: boolean): void {
    const id = "msg_nousage";
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id, type: "message", role: "assistant", model, content: [{ type: "text", text: NO_USAGE_TEXT }], stop_reason: "end_turn", stop_sequence: null }));
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    const ev = (type: string, data: Record<string, unknown> = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    res.end([
      ev("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null } }),
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ...NO_USAGE_PIECES.map((p) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: p } })),
      ev("content_block_stop", { index: 0 }),
      ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null } }),
      ev("message_stop"),
    ].join(""));
  }

  const server = await listenLoopback((req, res) => void handle(req, res));
  up.baseUrl = `${server.origin}/v1`;
  up.close = server.close;
  return up;
}
