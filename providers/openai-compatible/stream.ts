// Relay of an OpenAI-protocol stream to an OpenAI-protocol client: events pass through as they came (no
// per-chunk JSON re-serialisation), each checked to be JSON first (json-text.ts: no allocation), so a malformed
// chunk ends the stream with the provider's error instead of reaching the client; only a chunk with usage is
// parsed: a usage-only chunk is dropped if the client did not ask for usage, and usage on a choice chunk is taken
// off it (sent on its own before [DONE] if asked).
import { Readable } from "node:stream";
import { SseParser, eventLimitOf, type SseEvent } from "../../core/sse/parse.ts";
import { holdOpening, type Opening } from "../../core/sse/opening-hold.ts";
import { PUSH, type EventSink, type PushControl } from "../../core/sse/push.ts";
import { GatewayError } from "../../core/errors.ts";
import type { CallOptions } from "../../core/contracts/provider.ts";
import { releaseBody, transportError } from "../http.ts";
import { fromOpenAIUsage } from "./usage.ts";
import { throwIfChatStreamError } from "../translate/chat-stream-error.ts";
import { chunkOutput, NO_OUTPUT, PREAMBLE, TOKEN } from "./chunk-output.ts";
import { stringifyToolArguments } from "./tool-arguments.ts";
import { isJsonText } from "../json-text.ts";
import { unreadableEvent } from "../unreadable-event.ts";

type RelayCall = Pick<CallOptions, "reportUsage" | "reportFirstToken" | "reportFirstEvent">;

/**
 * Per-event work shared by both relays. The events before the answer's first token or finish_reason (a role-only
 * chunk) are held by core/sse/opening-hold.ts: a stream that ends there, or sends [DONE] at once, is an empty stream,
 * failed before anything was committed (within the hold) so dispatch retries it elsewhere, or ended with an error
 * (past it); never an empty answer. Azure's prompt filter preamble (`"object":""`, no choices) is dropped: no chat
 * client (the gateway's own chunk check included) takes a chunk of that shape.
 */
class Relay implements Opening {
  /** The answer has begun (a token or a finish_reason). */
  begun = false;
  /** The first token was reported: chunks are no longer read for it. */
  private timed = false;
  /** A usage taken off a choice chunk, for a client that asked: sent as its own chunk before [DONE]. */
  private heldUsage: Record<string, unknown> | undefined;
  /** `scanArguments`: the host may send tool-call arguments as objects (host-conventions.ts mayObjectArguments). */
  constructor(
    private readonly clientWantsUsage: boolean, private readonly call: RelayCall, private readonly provider: string,
    private readonly scanArguments: boolean,
  ) {}

  /** Adds what goes out for `ev` to `out`; true once the stream is over ([DONE], forwarded). */
  step(ev: SseEvent, out: SseEvent[]): boolean {
    let d = ev.data;
    if (d === "[DONE]") {
      if (!this.begun) throw emptyStream(this.provider);
      if (this.heldUsage) out.push({ data: JSON.stringify(this.heldUsage) });
      out.push(ev);
      return true;
    }
    // Nothing goes out unread: a client SDK would throw a bare SyntaxError on it, never seeing the gateway's error.
    if (!isJsonText(d)) throw unreadableEvent(this.provider);
    // `"usage":{` can only be the key itself: inside a JSON string the quotes would be escaped. Most chunks end
    // with a top-level `"usage":null}` (the gateway always asks for include_usage): that settles it without a scan.
    // Python's json.dumps (and so many self-hosted servers) writes `"usage": null}`: settled the same way.
    const plain = d.endsWith('"usage":null}') || d.endsWith('"usage": null}');
    // An in-band error (OpenAI's `{"error":{...}}`; OpenRouter's `"error":{...}` on a chunk) becomes the gateway's
    // error, rendered by the gateway with what the upstream said masked (core/secrets), never relayed as it came.
    // Other chunks are scanned for the key with an object value (hasObjectKey), then parsed to be sure.
    if (d.startsWith('{"error"') || (!plain && hasObjectKey(d, '"error"', 'rror"'))) this.throwIfError(d);
    // A tool call's arguments sent as an object (some OpenAI-compatible hosts): re-sent as the JSON text it stands for.
    if (this.scanArguments && hasObjectKey(d, '"arguments"', 'uments"')) {
      d = argumentsAsText(d);
      if (d !== ev.data) ev = { ...ev, data: d };
    }
    if (!plain && hasObjectKey(d, '"usage"', 'usage"')) {
      const chunk = JSON.parse(d);
      if (chunk.usage) {
        // The include_usage chunk (no choices), or usage beside the finish of a lone first choice: the answer's whole
        // count. With n > 1 a choice's finish does not end the others (hosts that send a running usage on choice
        // chunks): then only the choice-less chunk is final.
        const choices = chunk.choices;
        const final = !Array.isArray(choices) || choices.length === 0 || choices.every((c: any) => c?.finish_reason && !c.index);
        this.call.reportUsage(fromOpenAIUsage(chunk.usage), { final });
        if (Array.isArray(chunk.choices) && chunk.choices.length === 0) {
          if (!this.clientWantsUsage) return false;
          this.heldUsage = undefined; // the upstream's own usage chunk says it (vLLM's continuous usage ends so)
        } else ev = this.usageOff(ev, chunk);
      }
    }
    if (!this.timed) {
      // Time to first token is the first chunk with output, not the first event (often a role-only chunk).
      const o = chunkOutput(d);
      if (o === TOKEN) {
        this.timed = true;
        this.call.reportFirstToken();
      }
      if (o === PREAMBLE) return false;
      if (o !== NO_OUTPUT) this.begun = true;
    }
    out.push(ev);
    return false;
  }

  /**
   * A choice chunk that carries usage (Mistral's last, which comes unasked: a strict host gets no stream_options)
   * without it: a client that did not ask never sees usage, one that asked gets it as OpenAI sends it, in a chunk of
   * its own (`choices: []`) before [DONE], and `usage: null` here.
   */
  private usageOff(ev: SseEvent, chunk: Record<string, unknown>): SseEvent {
    const { choices: _, usage, ...head } = chunk;
    const rest = { ...chunk };
    if (this.clientWantsUsage) {
      rest.usage = null;
      this.heldUsage = { ...head, choices: [], usage };
    } else delete rest.usage;
    return { ...ev, data: JSON.stringify(rest) };
  }

  /** The error for a body that ended before [DONE]. */
  ended(): GatewayError {
    return this.begun ? endedEarly(this.provider) : emptyStream(this.provider);
  }

  private throwIfError(d: string): void {
    throwIfChatStreamError(JSON.parse(d), this.provider);
  }
}

/** Chunk `d` with each tool call's object `arguments` as a JSON string (tool-arguments.ts); `d` itself if none was. */
function argumentsAsText(d: string): string {
  const chunk: unknown = JSON.parse(d);
  return stringifyToolArguments(chunk, "delta") ? JSON.stringify(chunk) : d;
}

/**
 * Whether `key` (quoted) stands in chunk `d` with an object value, JSON's whitespace allowed around the colon
 * (`"usage": {`: Python's json.dumps, Go's indent). One scan for `tail`, the key's end (a pattern that starts with a
 * rarer character than `"`: a third of the cost of a scan for `"error"`); each place it occurs is looked at where it
 * stands, so a spaced chunk costs what a compact one does.
 */
function hasObjectKey(d: string, key: string, tail: string): boolean {
  const back = key.length - tail.length;
  for (let i = d.indexOf(tail, back); i !== -1; i = d.indexOf(tail, i + tail.length)) {
    if (!d.startsWith(key, i - back)) continue;
    let j = skipSpace(d, i + tail.length);
    if (d.charCodeAt(j) !== 58) continue; // ":"
    j = skipSpace(d, j + 1);
    if (d.charCodeAt(j) === 123) return true; // "{"
  }
  return false;
}

/** The index of the first character at or after `i` that is not JSON whitespace. */
function skipSpace(d: string, i: number): number {
  for (let c = d.charCodeAt(i); c === 32 || c === 10 || c === 13 || c === 9; c = d.charCodeAt(++i));
  return i;
}

const endedEarly = (provider: string) =>
  new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before [DONE]`, { details: { provider } });

const emptyStream = (provider: string) =>
  new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent an empty stream`, { retryable: true, details: { provider, reason: "empty_stream" } });

/** Relay over already-parsed events. */
export function relayChatStream(
  events: AsyncIterable<SseEvent>, clientWantsUsage: boolean, call: RelayCall, provider: string, scanArguments = false,
): AsyncIterableIterator<SseEvent> {
  const relay = new Relay(clientWantsUsage, call, provider, scanArguments);
  return holdOpening(relayEvents(events, relay), relay, call);
}

async function* relayEvents(events: AsyncIterable<SseEvent>, relay: Relay): AsyncGenerator<SseEvent> {
  const out: SseEvent[] = [];
  for await (const ev of events) {
    const stop = relay.step(ev, out);
    for (let i = 0; i < out.length; i++) yield out[i]!;
    out.length = 0;
    if (stop) return;
  }
  throw relay.ended();
}

/**
 * The hot path: upstream bytes -> SSE parse -> relay in one step per read. Transport failures mid-stream become
 * gateway errors (rendered as the protocol's error event).
 */
export function relayChatBody(
  body: AsyncIterable<Uint8Array>, clientWantsUsage: boolean, call: RelayCall, provider: string, signal: AbortSignal,
  scanArguments = false,
): AsyncIterableIterator<SseEvent> {
  const relay = new Relay(clientWantsUsage, call, provider, scanArguments);
  // A Node stream (undici's body): read by its 'data' events, so it can be pushed as well as pulled. The hold owns
  // the answer deadline (core/net/answer-deadline.ts) until the answer begins or the hold ends.
  const events = body instanceof Readable ? new ChatBodyRelay(body, relay, provider, signal) : relayChatIterable(body, relay, provider, signal);
  return holdOpening(events, relay, call, body);
}

async function* relayChatIterable(body: AsyncIterable<Uint8Array>, relay: Relay, provider: string, signal: AbortSignal): AsyncGenerator<SseEvent> {
  const parser = new SseParser(eventLimitOf(body));
  const out: SseEvent[] = [];
  try {
    for await (const chunk of body) {
      const events = parser.push(chunk);
      for (let i = 0; i < events.length; i++) {
        const stop = relay.step(events[i]!, out);
        for (let j = 0; j < out.length; j++) yield out[j]!;
        out.length = 0;
        if (stop) return;
      }
    }
  } catch (err) {
    throw transportError(provider, err, signal);
  }
  throw relay.ended();
}

const enum State { Open, Done, Failed, Cancelled }

/**
 * Pulled, the body pauses only once this many events wait. Pausing as soon as one waits made every upstream chunk
 * wait for a resume on the next tick, after the writer's flush: a translated stream from a fast upstream went out
 * in one write per chunk or two (28 for 50 chunks) instead of two (one before the ledger commit, one after).
 */
export const PULL_QUEUE_LIMIT = 256;

/**
 * The relay over a Node stream, pulled (AsyncIterator) or pushed (core/sse/push.ts). Reads arrive as 'data'
 * events; their events queue here until the consumer takes them — while too many wait, the body is paused, which
 * pauses the upstream socket (back-pressure either way). After [DONE] the rest of the body (normally just its
 * end) is drained so the connection can be reused; a consumer leaving early destroys it quietly.
 */
class ChatBodyRelay implements AsyncIterableIterator<SseEvent>, PushControl {
  private readonly parser: SseParser;
  private queue: SseEvent[] = [];
  private head = 0;
  private state = State.Open;
  private error: unknown;
  private listening = false;
  /** Pauses not yet resumed: the writer (socket full) and metering (ledger commit) pause independently. */
  private paused = 0;
  private flushQueued = false;
  private sink: EventSink | undefined;
  private waiter: { resolve(r: IteratorResult<SseEvent>): void; reject(e: unknown): void } | undefined;
  // Bound once per stream: the body's listeners.
  private readonly onData = this.data.bind(this);
  private readonly onEnd = this.end.bind(this);
  private readonly onFail = this.fail.bind(this);

  constructor(private readonly body: Readable, private readonly relay: Relay, private readonly provider: string, private readonly signal: AbortSignal) {
    this.parser = new SseParser(eventLimitOf(body));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<SseEvent>> {
    if (this.head < this.queue.length) return Promise.resolve({ value: this.take(), done: false });
    if (this.state !== State.Open) return this.state === State.Failed ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.listen();
    });
  }

  return(): Promise<IteratorResult<SseEvent>> {
    this.cancel();
    return Promise.resolve({ value: undefined, done: true });
  }

  [PUSH](sink: EventSink): PushControl {
    this.sink = sink;
    this.listen();
    // Events already read (the rest of the last read) go out on the next tick, never from inside this call.
    if (this.head < this.queue.length || this.state !== State.Open) this.queueFlush();
    return this;
  }

  pause(): void {
    this.paused++;
    if (this.state === State.Open) this.body.pause();
  }

  resume(): void {
    if (this.paused > 0) this.paused--;
    if (this.paused) return;
    this.flush();
    if (this.state === State.Open && !this.paused && this.sink) this.body.resume();
  }

  cancel(): void {
    if (this.state === State.Cancelled) return;
    const open = this.state === State.Open;
    this.state = State.Cancelled;
    this.queue = [];
    this.head = 0;
    this.sink = undefined;
    if (open) {
      this.unlisten();
      releaseBody(this.body, false);
    }
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve({ value: undefined, done: true });
  }

  private take(): SseEvent {
    const ev = this.queue[this.head++]!;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      // Pulled and nothing left: read on.
      if (this.state === State.Open && !this.sink) this.body.resume();
    }
    return ev;
  }

  private listen(): void {
    if (this.listening || this.state !== State.Open) {
      if (this.state === State.Open && !this.paused) this.body.resume();
      return;
    }
    this.listening = true;
    this.body.on("data", this.onData);
    this.body.on("end", this.onEnd);
    this.body.on("error", this.onFail);
  }

  private unlisten(): void {
    if (!this.listening) return;
    this.listening = false;
    this.body.off("data", this.onData);
    this.body.off("end", this.onEnd);
    this.body.off("error", this.onFail);
  }

  private data(chunk: Uint8Array): void {
    if (this.state !== State.Open) return;
    try {
      const events = this.parser.push(chunk);
      for (let i = 0; i < events.length; i++) {
        if (this.relay.step(events[i]!, this.queue)) {
          this.state = State.Done;
          this.unlisten();
          releaseBody(this.body, true);
          break;
        }
      }
    } catch (err) {
      this.failWith(err);
    }
    this.flush();
  }

  private end(): void {
    if (this.state !== State.Open) return;
    this.unlisten();
    this.state = State.Failed;
    this.error = this.relay.ended();
    this.flush();
  }

  private fail(err: unknown): void {
    if (this.state !== State.Open) return;
    this.failWith(err);
    this.flush();
  }

  private failWith(err: unknown): void {
    this.unlisten();
    this.state = State.Failed;
    this.error = transportError(this.provider, err, this.signal);
    releaseBody(this.body, false);
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    process.nextTick(flushRelay, this);
  }

  /** Hand out what is queued: to the sink while not paused, or to a waiting next(); pause the body if any is left. */
  flush(): void {
    this.flushQueued = false;
    const sink = this.sink;
    if (sink) {
      while (!this.paused && this.head < this.queue.length && this.sink === sink) sink.onEvent(this.queue[this.head++]!);
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      if (this.paused || this.sink !== sink) return;
      if (this.state === State.Open) return;
      if (this.head < this.queue.length) return;
      this.sink = undefined;
      if (this.state === State.Done) sink.onEnd();
      else if (this.state === State.Failed) sink.onError(this.error);
      return;
    }
    const w = this.waiter;
    if (w && (this.head < this.queue.length || this.state !== State.Open)) {
      this.waiter = undefined;
      if (this.head < this.queue.length) w.resolve({ value: this.take(), done: false });
      else if (this.state === State.Failed) w.reject(this.error);
      else w.resolve({ value: undefined, done: true });
    }
    if (this.state === State.Open && this.queue.length - this.head > PULL_QUEUE_LIMIT) this.body.pause();
  }
}

function flushRelay(r: ChatBodyRelay): void {
  r.flush();
}
