// Writes a GatewayResponse (or an error) straight to the Node response: no web-streams adapter on the hot path.
import type { ServerResponse } from "node:http";
import type { GatewayContext, GatewayResponse, Outcome } from "../pipeline/context.ts";
import { streamAbandonment } from "../pipeline/compose.ts";
import { untilAbandoned } from "../pipeline/abandon.ts";
import { GatewayError, sentStatus, retryAfterHeader, retryAfterMsHeader, toGatewayError, toGeminiJSON } from "../errors.ts";
import { encodeSse, encodeSseCrlf, SSE_HEADERS } from "../sse/encode.ts";
import type { SseEvent } from "../sse/parse.ts";
import type { Usage } from "../contracts/provider.ts";
import { clientWasTold } from "../sse/told-error.ts";
import { addObservabilityHeaders } from "../observability/headers.ts";
import { shutdownCut } from "../shutdown.ts";
import { writeWebResponse } from "./respond-web.ts";
import { errorStatus, writeHeadSafely, type HeadReporter } from "./safe-head.ts";
import { isInternalFault, logRequestFailure } from "./failure-log.ts";
import { canPush, PUSH, WRITE_HOLD, type EventSink, type PushControl, type WriteHold } from "../sse/push.ts";
import { anthropicCatalog } from "../endpoints/models-anthropic.ts";
import { ResponsesStreamEnd } from "./responses-stream-end.ts";
import { MessagesStreamEnd } from "./messages-stream-end.ts";
import { geminiBlockedEnding } from "./gemini-stream-end.ts";
import { nextSequenceOf } from "../sse/next-sequence.ts";
import { openaiClientOf, overflowFigures } from "./overflow-figures.ts";
import type {} from "../metering/meter.ts"; // ctx.meter

export interface WriteHooks {
  /** Called right before the first byte goes out. */
  firstByte(): void;
}

function baseHeaders(ctx: GatewayContext, extra?: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { "x-request-id": ctx.requestId, ...ctx.responseHeaders, ...extra };
  if (ctx.resolvedProvider) h["x-mg-resolved-provider"] = ctx.resolvedProvider;
  addObservabilityHeaders(ctx, h);
  return h;
}

/** Errors in Anthropic's envelope, with request-id: the Messages API's, and the catalog's to an Anthropic client. */
const anthropicErrors = (ctx: GatewayContext): boolean => ctx.protocol === "anthropic" || anthropicCatalog(ctx);

export function errorBody(ctx: GatewayContext, err: GatewayError): unknown {
  if (anthropicErrors(ctx)) return err.toAnthropicJSON(overflowFigures(ctx, err));
  return ctx.protocol === "gemini" ? toGeminiJSON(err) : err.toJSON(openaiClientOf(ctx));
}

/**
 * An error's headers; if building them throws (a header computed from an upstream's figures), the minimal ones: the
 * error path must always answer, with the request's id, or the request's cleanup after it never runs.
 */
function errorHeaders(ctx: GatewayContext, err: GatewayError): Record<string, string> {
  try {
    return baseHeaders(ctx, { "content-type": "application/json", ...err.headers });
  } catch (e) {
    ctx.gateway?.log.error("response headers failed; error sent with minimal headers", { requestId: ctx.requestId, error: String(e) });
    return { ...err.headers, "x-request-id": ctx.requestId, "content-type": "application/json" };
  }
}

/** Writes the error (unless the response has begun) and returns the status the client was sent. */
export function writeError(ctx: GatewayContext, res: ServerResponse, err: GatewayError, hooks: WriteHooks): number {
  if (res.headersSent || res.destroyed) {
    if (!res.destroyed) res.end();
    return err.status;
  }
  const headers = errorHeaders(ctx, err);
  if (err.retryAfter !== undefined) {
    headers["retry-after"] = retryAfterHeader(err.retryAfter);
    // Retry-After is whole seconds: an upstream's 1.5 s would be 2 s. The SDKs read the exact wait here first.
    headers["retry-after-ms"] ??= retryAfterMsHeader(err.retryAfter);
  }
  if (anthropicErrors(ctx)) headers["request-id"] = ctx.requestId;
  hooks.firstByte();
  // A Gemini client retries on the status alone: one not worth retrying goes out as a status it does not retry.
  const status = errorStatus(sentStatus(ctx.protocol, err));
  writeWhole(res, status, headers, JSON.stringify(errorBody(ctx, err)), ctx);
  return status;
}

/**
 * A whole response in one socket write: status line, headers and body as one string, and nothing left for end().
 * `writeHead()` then `end(text)` sent the body chunked (the headers were fixed before its length was known), with
 * the terminating chunk and an empty write of end()'s own after it: five buffers gathered into one writev, each with
 * its allocations. Here the length is in the headers, the write goes out as soon as it is made (the socket uncorked
 * at once rather than on the next tick), and end() finds the socket's buffer empty. A response that has no body
 * (HEAD, 204, 304) or no socket yet (a pipelined request waiting its turn) takes Node's own path; a HEAD is told the
 * length its GET's body has, as the GET's other headers.
 */
export function writeWhole(res: ServerResponse, status: number, headers: Record<string, string>, text: string, by?: HeadReporter): void {
  const head = res.req?.method === "HEAD";
  if (head && status !== 204 && status !== 304) headers["content-length"] = String(Buffer.byteLength(text));
  if (status === 204 || status === 304 || head || !res.socket) {
    writeHeadSafely(res, status, headers, by);
    res.end(text);
    return;
  }
  headers["content-length"] = String(Buffer.byteLength(text));
  writeHeadSafely(res, status, headers, by);
  res.write(text);
  const socket = res.socket;
  if (socket?.writableCorked) socket.uncork();
  res.end();
}

/** In-band error for a stream that already started (reference §5: errors after the first byte are events). */
export function streamErrorEvent(ctx: GatewayContext, err: GatewayError, sequence?: number): string {
  if (ctx.protocol === "anthropic") return `event: error\ndata: ${JSON.stringify(err.toAnthropicJSON(overflowFigures(ctx, err)))}\n\n`;
  // The Gemini error envelope as a `data:` frame: @google/genai checks every frame for `error` and throws its ApiError
  // with the status. (Bare JSON, as a failed request's body, is recognised only when it arrives in a read of its own;
  // written after the last frames, as here, the SDK threw "Incomplete JSON segment" and lost the status.)
  if (ctx.protocol === "gemini") return `data: ${JSON.stringify(toGeminiJSON(err))}\r\n\r\n`;
  if (ctx.protocol === "responses") {
    // The Responses `error` event; the nested `error` is what the openai SDK's stream reader throws on. Its
    // sequence_number continues the stream's: `sequence` when the gateway wrote response.failed before it, else the one
    // the translator or relay that numbered the events left on the error.
    const { error } = err.toJSON("responses");
    const seq = sequence ?? nextSequenceOf(err);
    return `event: error\ndata: ${JSON.stringify({ type: "error", ...(typeof seq === "number" ? { sequence_number: seq } : {}), code: error.code, message: error.message, param: error.param, error })}\n\n`;
  }
  return `data: ${JSON.stringify(err.toJSON(openaiClientOf(ctx)))}\n\n`;
}

/**
 * The text that ends a begun stream for `err`, and whether the response is then cut rather than ended: on a Responses
 * stream the gateway ended itself, response.failed first (responses-stream-end.ts), then the error event numbered
 * after it; a Messages stream a guardrail blocked ends as a refusal, without the error event (messages-stream-end.ts);
 * on a Gemini stream a guardrail's block first ends the answer as Google's filters do (gemini-stream-end.ts), and any
 * other failure is cut after its error frame (endWithStreamError).
 */
function streamEnding(ctx: GatewayContext, out: PendingWrite, err: GatewayError): { text: string; cut: boolean } {
  if (clientWasTold(err)) return { text: "", cut: false }; // the upstream's own error events were relayed
  const failed = out.responses?.failed(err);
  if (failed) return { text: failed.text + streamErrorEvent(ctx, err, failed.errorSequence), cut: false };
  const refused = out.messages?.refused(err, billedUsage(ctx, err));
  if (refused) return { text: refused, cut: false };
  const blocked = ctx.protocol === "gemini" ? geminiBlockedEnding(err) : undefined;
  return { text: (blocked ?? "") + streamErrorEvent(ctx, err), cut: ctx.protocol === "gemini" && !blocked };
}

/**
 * The usage a stream that failed with `err` is billed for: the meter's figure, which usage-metering wrote to the ledger
 * before the failure reached the writer (the upstream's counts, or the estimate of what was generated).
 */
function billedUsage(ctx: GatewayContext, err: GatewayError): Usage | undefined {
  const status = ctx.response?.status ?? 200;
  return ctx.meter?.finalUsage({ status, aborted: false, streamError: err })?.usage;
}

/**
 * Ends a stream with its in-band error; `cut` (a Gemini stream's failure other than a guardrail's block) then closes
 * the socket without the chunked terminator: the error frame alone ends the stream cleanly, and clients that ignore
 * `error` frames (@google/generative-ai, under LangChain's ChatGoogleGenerativeAI) took the truncated answer for a
 * whole one; cut, every client sees a failed read (one that had not read the error frame yet loses it to the cut).
 * The promise settles once the socket is closed: h3 ends a handled response after the handler returns, which would
 * otherwise add the terminator.
 */
function endWithStreamError(res: ServerResponse, text: string, cut: boolean): Promise<void> | undefined {
  if (!cut) {
    res.end(text);
    return undefined;
  }
  return new Promise((resolve) => {
    // A write to a socket already gone never calls back: its close ends the wait.
    const cut = () => {
      res.off("close", cut);
      res.destroy();
      resolve();
    };
    res.once("close", cut);
    res.write(text, cut);
  });
}

/** Resolves with the outcome once the whole response is written or the client has gone. */
export async function writeResponse(ctx: GatewayContext, res: ServerResponse, hooks: WriteHooks): Promise<Outcome> {
  const r = ctx.response!;
  if (r.kind === "json") {
    const text = JSON.stringify(r.body);
    hooks.firstByte();
    writeWhole(res, r.status, baseHeaders(ctx, { "content-type": "application/json" }), text, ctx);
    return { status: res.statusCode, aborted: false };
  }
  if (r.kind === "web") return writeWebResponse(res, r.response, baseHeaders(ctx), ctx.signal, hooks, r.onCut);
  if (r.kind === "bytes") {
    hooks.firstByte();
    writeHeadSafely(res, r.status, baseHeaders(ctx, { "content-type": r.contentType, "content-length": String(r.body.byteLength) }), ctx);
    res.end(r.body);
    return { status: res.statusCode, aborted: false };
  }
  const out = new PendingWrite(res, ctx.protocol === "gemini" ? encodeSseCrlf : encodeSse);
  if (ctx.protocol === "responses") out.responses = new ResponsesStreamEnd();
  if (ctx.protocol === "anthropic") out.messages = new MessagesStreamEnd();
  // A third-party plugin's wrapper may never hand over the next event: once the request is aborted (the client left,
  // a shutdown cut it), the stream is let go 2 s later. One timer per aborted request, nothing per event; a stream of
  // the gateway's own steps ends when aborted and is not watched.
  const abandonment = streamAbandonment(ctx);
  if (!abandonment) return writeStream(ctx, res, r, hooks, out);
  const abandoned = () => {
    out.abandoned = true;
    return abandonment();
  };
  return untilAbandoned(writeStream(ctx, res, r, hooks, out), ctx.signal, abandoned).catch((e) => {
    if (!out.abandoned) throw e;
    return letGo(ctx, res, r.status, out);
  });
}

/**
 * A stream abandoned by its writer: the client that left has nothing more to get; one still there (a shutdown's cut)
 * gets the cut's error, in-band once the headers are out. The writer's loop, should the stream ever go on, stops.
 */
async function letGo(ctx: GatewayContext, res: ServerResponse, status: number, out: PendingWrite): Promise<Outcome> {
  const cut = shutdownCut(ctx.signal);
  const text = out.pending;
  out.pending = "";
  if (res.destroyed || !cut) return { status, aborted: true };
  if (!res.headersSent) throw cut; // nothing sent yet: the caller renders the 503
  const ending = streamEnding(ctx, out, cut);
  await endWithStreamError(res, text + ending.text, ending.cut);
  return { status, aborted: false, streamError: cut };
}

async function writeStream(ctx: GatewayContext, res: ServerResponse, r: Extract<GatewayResponse, { kind: "stream" }>, hooks: WriteHooks, out: PendingWrite): Promise<Outcome> {
  // Events that arrive together (one upstream read) go out as one write: they are collected while the iterator
  // chain runs on microtasks and flushed on the next tick, before any I/O — no added latency, one chunk per read.
  // The chain may hold the writer (WRITE_HOLD): usage metering does through the ledger commit before the terminal
  // event, so the frames of the read that carried it go out with it.
  const iterator = r.events[Symbol.asyncIterator]();
  let started = false;
  (iterator as { [WRITE_HOLD]?(h: WriteHold): void })[WRITE_HOLD]?.(out);
  try {
    for (;;) {
      // Back-pressure from the buffer's state, not from a remembered write() result: the 'drain' of a write the
      // socket could not take at once (> 16 KiB, a fast upstream's burst) often fires before the next event is
      // here (the SQLite commit before [DONE], the next upstream read); waiting for it then waited forever.
      if (res.writableNeedDrain) {
        await drainedOrClosed(res);
        if (res.destroyed || out.abandoned) return { status: r.status, aborted: true };
      }
      const step = await iterator.next();
      if (out.abandoned) return { status: r.status, aborted: true };
      if (step.done) break;
      if (res.destroyed) return { status: r.status, aborted: true };
      if (!started) {
        hooks.firstByte();
        writeHeadSafely(res, r.status, baseHeaders(ctx, SSE_HEADERS), ctx);
        started = true;
      }
      out.pending += out.encode(step.value);
      out.responses?.note(step.value);
      out.messages?.note(step.value);
      // Once the headers are out, a chain that can push does (core/sse/push.ts): nothing waits between frames.
      // Returned, not awaited: this function's frame ends here, so it does not keep the first event (its `step`)
      // and the read it was parsed from for the whole stream. PushWriter never rejects, and a client that leaves is its
      // own to handle (the catch and finally here are the pull loop's).
      if (canPush(iterator)) return new Promise<Outcome>((resolve) => new PushWriter(ctx, res, r.status, out, resolve).start(iterator));
      out.queueFlush();
    }
  } catch (e) {
    // Cut by a shutdown: the stream ends with the shutdown's error event, like any other mid-stream failure.
    const err = shutdownCut(ctx.signal) ?? toGatewayError(e);
    if (res.destroyed || out.abandoned || (ctx.signal.aborted && !shutdownCut(ctx.signal))) return { status: r.status, aborted: true };
    if (!started) throw err; // nothing sent yet: the caller renders a normal error response
    if (isInternalFault(err)) logRequestFailure(ctx, err, true); // the client gets the envelope; the log, the cause
    const ending = streamEnding(ctx, out, err);
    const text = out.pending + ending.text;
    out.pending = "";
    await endWithStreamError(res, text, ending.cut);
    return { status: r.status, aborted: false, streamError: err };
  } finally {
    if (res.destroyed || out.abandoned) await iterator.return?.(undefined)?.catch(() => {});
  }
  if (!started) {
    hooks.firstByte();
    writeHeadSafely(res, r.status, baseHeaders(ctx, SSE_HEADERS), ctx);
  }
  const rest = out.pending;
  out.pending = "";
  res.end(rest);
  return { status: r.status, aborted: false };
}

/**
 * Once a stream's headers are on the wire, Node keeps their text (`_header`, ~700 bytes for a stream's ~17 headers)
 * only to answer "were the headers sent?" (`headersSent`, and the checks that throw ERR_HTTP_HEADERS_SENT): it reads
 * the text itself only before sending it (`_send`, while `_headerSent` is false). A one-character stand-in keeps every
 * check true and lets the text go for the rest of the stream.
 */
function releaseHeaderBlock(res: ServerResponse): void {
  const r = res as unknown as { _header?: unknown; _headerSent?: boolean };
  if (r._headerSent === true && typeof r._header === "string" && r._header.length > 1) r._header = SENT;
}
const SENT = "\n";

/** Text encoded but not yet written; whether a flush is queued for the next tick, and whether one wrote yet; the
 * holds (WRITE_HOLD) that keep the text pending; and, once the stream is pushed, its writer (whose flush also
 * handles back-pressure). */
class PendingWrite implements WriteHold {
  pending = "";
  queued = false;
  wrote = false;
  held = 0;
  /** The request was let go while its stream had not ended (writeResponse): nothing more is written. */
  abandoned = false;
  pusher: PushWriter | undefined;
  /** A Responses client's stream: what it was sent of the response, for the response.failed a gateway error ends it with. */
  responses: ResponsesStreamEnd | undefined;
  /** A Messages client's stream: its blocks still open, for the refusal a guardrail's block ends it with. */
  messages: MessagesStreamEnd | undefined;
  /** `encode` writes the client protocol's events (encode.ts): CRLF-framed on a Gemini stream, as its error frames here end. */
  constructor(readonly res: ServerResponse, readonly encode: (ev: SseEvent) => string) {}

  queueFlush(): void {
    if (this.queued) return;
    this.queued = true;
    if (this.pusher) process.nextTick(flushPushed, this.pusher);
    else process.nextTick(flushPending, this);
  }

  hold(): void {
    this.held++;
  }

  release(): void {
    if (this.held > 0 && --this.held === 0 && this.pending !== "") this.queueFlush();
  }
}

/** Module-level and handed its state by process.nextTick: no closure per stream (tsx's keepNames would also give
 * every named closure its own `name` property: ~250 bytes and a defineProperty call each). */
function flushPending(w: PendingWrite): void {
  w.queued = false;
  if (!w.pending || w.res.destroyed || w.held || w.abandoned) return; // a release queues the flush again
  const text = w.pending;
  w.pending = "";
  w.res.write(text);
  if (!w.wrote) {
    w.wrote = true;
    releaseHeaderBlock(w.res);
  }
}

/**
 * The rest of a stream, pushed: each event is encoded into the same pending buffer and flushed on the next tick, as
 * in the pull loop; back-pressure pauses the source until 'drain'; the client leaving cancels it (the upstream is
 * destroyed). Errors are rendered like the pull loop's (the headers are out, so always in-band).
 */
class PushWriter implements EventSink {
  private control!: PushControl;
  private settled = false;
  private waitingDrain = false;
  private readonly onClose = this.closed.bind(this);
  private onDrain: (() => void) | undefined;
  constructor(
    private readonly ctx: GatewayContext, private readonly res: ServerResponse, private readonly status: number,
    private readonly out: PendingWrite, private readonly resolve: (o: Outcome) => void,
  ) {
    out.pusher = this;
  }

  /** Switches the source to push. The events it still holds from the first read are handed out on a tick queued
   * before this one's flush, so the first event leaves with them in one write. */
  start(it: AsyncIterator<unknown>): void {
    try {
      this.control = (it as unknown as { [PUSH](s: EventSink): PushControl })[PUSH](this);
    } catch (e) {
      return this.onError(e); // the headers are out: in-band, like any later failure
    }
    if (this.res.destroyed) return this.closed();
    this.res.on("close", this.onClose);
    this.out.queueFlush();
  }

  onEvent(ev: SseEvent): void {
    if (this.settled) return;
    this.out.pending += this.out.encode(ev);
    this.out.responses?.note(ev);
    this.out.messages?.note(ev);
    this.out.queueFlush();
  }

  onEnd(): void {
    if (this.settled) return;
    const rest = this.out.pending;
    this.out.pending = "";
    this.res.end(rest);
    this.settle({ status: this.status, aborted: false });
  }

  onError(e: unknown): void {
    if (this.settled) return;
    const { ctx, res } = this;
    const err = shutdownCut(ctx.signal) ?? toGatewayError(e);
    if (res.destroyed || (ctx.signal.aborted && !shutdownCut(ctx.signal))) return this.settle({ status: this.status, aborted: true });
    if (isInternalFault(err)) logRequestFailure(ctx, err, true);
    const end = streamEnding(ctx, this.out, err);
    const ending = endWithStreamError(res, this.out.pending + end.text, end.cut);
    this.out.pending = "";
    const outcome = { status: this.status, aborted: false, streamError: err };
    if (!ending) return this.settle(outcome);
    this.settled = true; // the cut's close is the gateway's, not a client leaving
    void ending.then(() => this.settle(outcome));
  }

  /** The next-tick flush: one write for the events of one read; pause the source while the socket is full. */
  flush(): void {
    const out = this.out;
    flushPending(out);
    if (this.settled || this.waitingDrain || !this.res.writableNeedDrain) return;
    this.waitingDrain = true;
    this.control.pause();
    this.onDrain ??= this.drained.bind(this);
    this.res.once("drain", this.onDrain);
  }

  private drained(): void {
    this.waitingDrain = false;
    if (!this.settled) this.control.resume();
  }

  /** The response closed: normally after our end(); before it, the client left — stop the upstream. */
  private closed(): void {
    if (this.settled) return;
    this.out.pending = "";
    this.settle({ status: this.status, aborted: true });
    this.control.cancel();
  }

  private settle(o: Outcome): void {
    this.settled = true;
    this.res.off("close", this.onClose);
    if (this.onDrain) this.res.off("drain", this.onDrain);
    this.resolve(o);
  }
}

function flushPushed(w: PushWriter): void {
  w.flush();
}

/** Resolves on 'drain' or 'close', removing both listeners (a stream may wait many times). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
