// Relay of an upstream Responses stream to a Responses client: named events (`event:` + `data:`) pass through as
// they came, names kept, each checked to be JSON first (json-text.ts: no allocation): one that is not ends the
// stream as a cut one, never reaching the client, whose SDK would throw a bare SyntaxError on it. Only the terminal
// event is parsed, for usage (web searches counted from its output, or from the calls begun when the stream is cut
// before it); the first `*.delta` is the first token. The
// protocol has no [DONE]: the stream is over after response.completed / .incomplete / .failed, and a body that
// ends before one (without an `error` event saying why) was cut off. The envelope events that open a stream
// (response.created, .in_progress, .queued) are held (core/sse/opening-hold.ts) until another comes: a body that
// ends after them alone, or goes on to an `error` or a response.failed with no output, fails before dispatch commits
// it (within the bounded hold), so it is retried elsewhere, as the chat and Anthropic relays do. The answer relayed
// is held to server.upstream_limits.answer_bytes (responses-answer-size.ts): the final event would carry it all, so a
// stream past it ends there with answer_too_large and its upstream is let go, as a JSON answer that large is refused.
import { Readable } from "node:stream";
import { SseParser, eventLimitOf, type SseEvent } from "../../core/sse/parse.ts";
import { holdOpening, type Opening } from "../../core/sse/opening-hold.ts";
import { GatewayError } from "../../core/errors.ts";
import { toldClient } from "../../core/sse/told-error.ts";
import { afterTerminalUsage } from "../../core/metering/terminal-usage.ts";
import type { CallOptions } from "../../core/contracts/provider.ts";
import { releaseBody, transportError } from "../http.ts";
import { inBandError } from "../in-band-error.ts";
import { openaiErrorStatus } from "../codecs/openai-error-status.ts";
import { fromResponsesUsage } from "./responses-usage.ts";
import { ResponseSoFar } from "../../core/responses/response-so-far.ts";
import { failedResponseError } from "../../core/responses/failed-error.ts";
import { RelayedAnswer } from "./responses-answer-size.ts";
import { AnswerBound } from "../answer-bound.ts";
import { isJsonText } from "../json-text.ts";
import { unreadableEvent } from "../unreadable-event.ts";
import { setNextSequence } from "../../core/sse/next-sequence.ts";

type RelayCall = Pick<CallOptions, "reportUsage" | "reportFirstToken" | "reportFirstEvent">;

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
const OPENING = new Set(["response.created", "response.in_progress", "response.queued"]);

/** The number after the last relayed event's (read from that one event only, when the stream fails). */
function sequenceAfter(last: SseEvent | undefined): number | undefined {
  const seq = last && /"sequence_number"\s*:\s*(\d+)/.exec(last.data)?.[1];
  return seq === undefined ? undefined : Number(seq) + 1;
}

/** The error, marked with the number after the last relayed event's. */
function continuing<E>(err: E, last: SseEvent | undefined): E {
  const seq = sequenceAfter(last);
  if (seq !== undefined) setNextSequence(err, seq);
  return err;
}

/** The event's type: its `event:` name (OpenAI always sends one), else the JSON's leading `type`. */
function typeOf(ev: SseEvent): string | undefined {
  if (ev.event !== undefined) return ev.event;
  return /^\{\s*"type"\s*:\s*"([^"]+)"/.exec(ev.data)?.[1];
}

/** `answerBytes`: server.upstream_limits.answer_bytes (unset: the default). */
export function relayResponsesBody(body: AsyncIterable<Uint8Array>, call: RelayCall, provider: string, signal: AbortSignal, answerBytes?: number): AsyncIterableIterator<SseEvent> {
  const opening: Opening = { begun: false };
  const answer = new RelayedAnswer(new AnswerBound(provider, answerBytes));
  return holdOpening(relay(body, call, provider, signal, opening, answer), opening, call, body);
}

/**
 * The upstream's failure an `error` event or a response.failed tells, judged as the same error sent as an HTTP status
 * (providers/in-band-error.ts): context_length_exceeded is the client's 400, never retried; insufficient_quota goes
 * to the next endpoint only; server_error and rate limits are worth another try.
 */
function upstreamFailure(provider: string, type: string, payload: any): GatewayError {
  const error = type === "error" ? payload : payload?.response?.error;
  const inner = typeof error?.error === "object" && error.error ? error.error : error; // the capture nests it, the SDK's type does not
  return inBandError(provider, openaiErrorStatus(inner), inner ?? payload);
}

/** An event's JSON: only events whose data is JSON get this far (isJsonText). */
function payloadOf(ev: SseEvent): any {
  return JSON.parse(ev.data);
}

/**
 * The failure an event whose data is not JSON stands for: for an `error` (a proxy's `event: error` / `data: upstream
 * reset`) the upstream's, its text as the message; for any other a malformed answer.
 */
function unreadable(provider: string, type: string | undefined, ev: SseEvent): GatewayError {
  return type === "error" ? upstreamFailure(provider, type, { message: ev.data }) : unreadableEvent(provider);
}

/** The upstream's failure, told by an `error` or a response.failed before any output: another endpoint may serve. */
function failedBeforeOutput(provider: string, type: string, ev: SseEvent): GatewayError | undefined {
  const payload = payloadOf(ev);
  if (type === "response.failed" && Array.isArray(payload?.response?.output) && payload.response.output.length) return undefined;
  return upstreamFailure(provider, type, payload);
}

async function* relay(body: AsyncIterable<Uint8Array>, call: RelayCall, provider: string, signal: AbortSignal, opening: Opening, answer: RelayedAnswer): AsyncGenerator<SseEvent> {
  const parser = new SseParser(eventLimitOf(body));
  // As in the chat relay: no destroy-on-return, so leaving after the terminal event drains the body quietly.
  const readable = body instanceof Readable ? body : undefined;
  const source: AsyncIterable<Uint8Array> = readable ? readable.iterator({ destroyOnReturn: false }) : body;
  let first = true;
  /** The upstream's own `error` event, relayed: what the stream failed of, if it ends without a terminal event. */
  let told: GatewayError | undefined;
  let done = false;
  let searches = 0;
  let last: SseEvent | undefined;
  const soFar = new ResponseSoFar();
  let cut: unknown;
  /** An upstream response.failed after output, relayed: the failure it ends the request with. */
  let failedAfterOutput: GatewayError | undefined;
  try {
    read: for await (const chunk of source) {
      const events = parser.push(chunk);
      for (const ev of events) {
        const type = typeOf(ev);
        // Nothing goes out unread: the stream ends here as a cut one (response.failed numbered after the last event
        // relayed, then the gateway's error event).
        if (!isJsonText(ev.data)) throw unreadable(provider, type, ev);
        if (first && type?.endsWith(".delta")) {
          first = false;
          call.reportFirstToken();
        }
        if (type === "error") told ??= upstreamFailure(provider, type, payloadOf(ev));
        // Named as OpenAI names them, so dispatch recognises the events that carry an upstream's error text (and
        // masks credentials in them: core/secrets/error-events.ts) whatever JSON spacing the upstream used.
        if (ev.event === undefined && (type === "error" || type === "response.failed")) ev.event = type;
        // Past the bound nothing more is relayed; before any output, the request fails as a whole (another endpoint may serve).
        answer.note(type, ev.data);
        if (type === "response.web_search_call.in_progress") {
          // A search OpenAI bills even if the stream is cut before the terminal event counts it.
          call.reportUsage({ inputTokens: 0, outputTokens: 0, webSearches: ++searches });
        }
        if (!opening.begun && !(type && OPENING.has(type))) {
          const failed = type === "error" || type === "response.failed" ? failedBeforeOutput(provider, type, ev) : undefined;
          if (failed) {
            const response = type === "response.failed" ? payloadOf(ev)?.response : undefined;
            if (response?.usage) call.reportUsage(fromResponsesUsage(response.usage, response.output));
            throw failed;
          }
          opening.begun = true;
        }
        if (type && TERMINAL.has(type)) {
          // Billed tokens: a failed response may still have consumed some.
          const response = payloadOf(ev)?.response;
          if (response?.usage) {
            const usage = fromResponsesUsage(response.usage, response.output);
            if (searches > (usage.webSearches ?? 0)) usage.webSearches = searches;
            call.reportUsage(usage, { final: true });
          }
          yield ev;
          done = true;
          if (type === "response.failed") {
            failedAfterOutput = told ?? upstreamFailure(provider, type, payloadOf(ev));
            // Its usage is the upstream's own final count: billed as reported, as response.completed's would be.
            if (response?.usage) afterTerminalUsage(failedAfterOutput);
            break read;
          }
          return;
        }
        soFar.note(type, ev);
        last = ev;
        yield ev;
      }
    }
  } catch (err) {
    cut = transportError(provider, err, signal);
  } finally {
    releaseBody(readable, done);
  }
  // A response that failed after output was relayed as it came; the request is still a failed one (the ledger's
  // stream_error, a failed attempt), as on every translated path, but the gateway adds no ending of its own.
  if (failedAfterOutput) throw toldClient(failedAfterOutput);
  if (cut === undefined) {
    if (!opening.begun) throw new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} sent an empty stream`, { retryable: true, details: { provider, reason: "empty_stream" } });
    // An `error` event already told the client what went wrong (the request still failed); otherwise the upstream
    // stopped mid-response.
    if (told) throw continuing(toldClient(told), last);
    cut = new GatewayError(502, "UPSTREAM_ERROR", `Provider ${provider} ended the stream before a terminal response event`, { details: { provider } });
  }
  // The client saw the response begin: it ends as a translated stream does, response.failed with the output so far,
  // then the gateway's error event numbered after it. (Not after the upstream's own `error`, nor for a client gone.)
  if (opening.begun && !told && !signal.aborted) {
    const { code, message } = failedResponseError(cut);
    last = soFar.failed(sequenceAfter(last), code, message);
    yield last;
  }
  throw continuing(cut, last);
}

