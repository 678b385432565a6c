// A total deadline on an upstream answer's body, beside undici's per-read timer (bodyTimeout). That timer restarts on
// every byte, so an upstream trickling one space a second into a JSON answer, or only `: keepalive` comments into a
// stream, kept a client waiting with nothing, for ever. The deadline bounds a JSON answer's whole body and a stream's
// wait for its first event; a stream's reader says when that event came (answerStarted), and from then on only the
// per-read timer applies, so long streams are not cut. A relay that holds a stream's opening events back
// (core/sse/opening-hold.ts) takes the deadline over (holdAnswerDeadline): it then runs until those are released.
import type { Readable } from "node:stream";
import { afterBound } from "../deadline.ts";

/** The disarm of a stream body's deadline: a property of the body (a WeakMap entry per upstream call cost GC work). */
const DISARM = Symbol("answer deadline");
type Armed = { [DISARM]?: () => void };

/**
 * Destroys `body` with `expired()` (the reader sees it as its error) unless it closes first or, with
 * `untilFirstEvent`, unless answerStarted(body) is called first.
 */
export function armAnswerDeadline(body: Readable, ms: number, expired: () => Error, untilFirstEvent: boolean): void {
  if (body.destroyed) return;
  // The deadline may destroy a body nobody reads yet (or any more), and undici's body emits 'error' on every destroy
  // before its end: with no listener that error is uncaught and ends the process. Readers still get it (for await and
  // pipeline listen on their own); this listener only keeps an unread body's error from being uncaught.
  body.on("error", ignore);
  const armed = body as Readable & Armed;
  // Counted as every bound is (core/deadline.ts): bytes that came while the loop was busy are read before the verdict.
  const cancel = afterBound(Math.max(1, ms), () => {
    armed[DISARM] = undefined;
    if (!body.destroyed) body.destroy(expired());
  });
  const disarm = () => {
    cancel();
    armed[DISARM] = undefined;
  };
  body.once("close", disarm);
  if (untilFirstEvent) armed[DISARM] = disarm;
}

/** A stream's reader parsed its first event from `body`: its answer has started, the deadline is off. */
export function answerStarted(body: object): void {
  (body as Armed)[DISARM]?.();
}

/**
 * Takes `body`'s stream deadline over: answerStarted(body) no longer ends it (the opening events a reader parses are
 * held, not an answer yet); the returned function does, once the holder lets them go. Undefined when none is armed.
 */
export function holdAnswerDeadline(body: object): (() => void) | undefined {
  const armed = body as Armed;
  const disarm = armed[DISARM];
  armed[DISARM] = undefined;
  return disarm;
}

function ignore(): void {}
