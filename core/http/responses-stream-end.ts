// How a Responses stream the gateway itself ends mid-way (a guardrail block, answer_too_large, a moderation refusal,
// a deadline, a shutdown's cut) reaches its client: response.failed with the response as it stood, then the `error`
// event, numbered on from the stream. A client that gets only the `error` (Codex CLI, opencode's Responses provider)
// takes the stream for one cut short and sends the request again, billed each time, never showing why; after a
// response.failed it shows the error and stops. A stream that already carries its terminal event (a translator or
// relay wrote response.failed for an upstream's failure) or never began a response gets the `error` event alone.
// What the response was is kept as the native relay keeps it (core/responses/response-so-far.ts).
import type { SseEvent } from "../sse/parse.ts";
import type { GatewayError } from "../errors.ts";
import { ResponseSoFar } from "../responses/response-so-far.ts";
import { failedResponseError } from "../responses/failed-error.ts";

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The event's type: its `event:` name, else the JSON's leading `type`. */
function typeOf(ev: SseEvent): string | undefined {
  return ev.event ?? /^\{\s*"type"\s*:\s*"([^"]+)"/.exec(ev.data)?.[1];
}

export class ResponsesStreamEnd {
  private readonly soFar = new ResponseSoFar();
  private last: SseEvent | undefined;
  private ended = false;

  /** Keeps what an event sent to the client tells of the response. */
  note(ev: SseEvent): void {
    this.last = ev;
    const type = typeOf(ev);
    if (type === undefined) return;
    if (TERMINAL.has(type)) this.ended = true;
    else this.soFar.note(type, ev);
  }

  /** The number after the last sent event's, when it had one. */
  private nextSequence(): number | undefined {
    const seq = this.last && /"sequence_number"\s*:\s*(\d+)/.exec(this.last.data)?.[1];
    return seq === undefined ? undefined : Number(seq) + 1;
  }

  /**
   * The response.failed event (encoded) that ends the stream for `err`, and the sequence_number its `error` event
   * then takes; no event when the stream already ended or never began a response.
   */
  failed(err: GatewayError): { text: string; errorSequence: number | undefined } | undefined {
    if (this.ended || !this.soFar.begun) return undefined;
    this.ended = true;
    const seq = this.nextSequence();
    // The code a client decides on (invalid_prompt for a failure no retry changes: failed-error.ts); the gateway's own
    // code (GUARDRAIL_BLOCKED, UPSTREAM_ERROR...) is in the `error` event that follows.
    const { code, message } = failedResponseError(err);
    const ev = this.soFar.failed(seq, code, message);
    return { text: `event: response.failed\ndata: ${ev.data}\n\n`, errorSequence: seq === undefined ? undefined : seq + 1 };
  }
}
