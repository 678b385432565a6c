// The load generator's HTTP client: undici Pool.dispatch with a bare handler (no stream objects, no body
// buffering), because the generator shares the machine's 2 cores with the processes it measures.
import { Pool } from "undici";
import { performance } from "node:perf_hooks";

export interface LoadTarget {
  name: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** The server process(es) answering this target (their CPU time per request is reported). */
  pid?: number | number[];
  /** Client protocol: chat completions (default) or the Messages API (translated to the chat upstream). */
  api?: "chat" | "messages";
  /** The model this target requests, when not the run's --model (a config serving other models). */
  model?: string;
  /** Requests answered with a status so far (each should leave an access line in a gateway's log). */
  answered?: number;
}

export interface Done {
  status: number;
  /** 2xx and, for streams, the body ended with `data: [DONE]`. */
  ok: boolean;
  /** performance.now() at response headers and at the last byte. */
  headersAt: number;
  endAt: number;
  /** We hung up on purpose after the first body bytes (abortAfterFirstChunk). */
  aborted: boolean;
}

const DONE_TAIL = "data: [DONE]\n\n";
/** How a complete messages stream ends. */
const MESSAGE_STOP_TAIL = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

export function createPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
}

/** One request; `cb` runs exactly once, at the end of the response or on error (status 0). */
export function send(pool: Pool, target: LoadTarget, body: string, stream: boolean, cb: (d: Done) => void, abortAfterFirstChunk = false): void {
  let status = 0;
  let headersAt = 0;
  let tail = "";
  let called = false;
  let aborted = false;
  const doneTail = target.api === "messages" ? MESSAGE_STOP_TAIL : DONE_TAIL;
  const finish = (ok: boolean) => {
    if (called) return;
    called = true;
    if (status) target.answered = (target.answered ?? 0) + 1;
    cb({ status, ok, headersAt, endAt: performance.now(), aborted });
  };
  pool.dispatch(
    { origin: target.origin, path: target.path, method: "POST", headers: target.headers, body },
    {
      onRequestStart() {}, // marks the handler as the new (controller) API
      onResponseStart(_c, statusCode) {
        status = statusCode;
        headersAt = performance.now();
      },
      onResponseData(c, chunk) {
        if (abortAfterFirstChunk) {
          // A client that goes away mid-stream: the connection is torn down under the server.
          aborted = true;
          c.abort(new Error("bench: client hung up"));
          return;
        }
        // Only the last bytes matter for the stream check; keep them without buffering the body.
        if (stream) tail = chunk.length >= doneTail.length ? chunk.toString("latin1", chunk.length - doneTail.length) : (tail + chunk.toString("latin1")).slice(-doneTail.length);
      },
      onResponseEnd() {
        finish(status >= 200 && status < 300 && (!stream || tail === doneTail));
      },
      onResponseError() {
        finish(false);
      },
    },
  );
}

/** Promise form for setup checks: the whole body as text. */
export async function fetchText(pool: Pool, target: LoadTarget, body: string): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const r = await pool.request({ path: target.path, method: "POST", headers: target.headers, body });
  target.answered = (target.answered ?? 0) + 1;
  return { status: r.statusCode, text: await r.body.text(), headers: r.headers };
}

export function requestBody(model: string, stream: boolean, api: LoadTarget["api"] = "chat"): string {
  const messages = [{ role: "user", content: "Say hello in fifty tokens." }];
  if (api === "messages") return JSON.stringify({ model, max_tokens: 256, messages, ...(stream ? { stream: true } : {}) });
  return JSON.stringify({ model, messages, ...(stream ? { stream: true } : {}) });
}
