// A stream failure the client has already been told of in its own protocol's words: a native relay passes the
// upstream's own `error` event and terminal response.failed through as they came. The failure is still thrown, so
// the request is recorded as what it was (stream_error in the ledger, a failed attempt, the circuit), but whoever
// writes the stream adds no ending of its own: a second error event would contradict the upstream's.
import { errorMark } from "../error-mark.ts";

const told = errorMark("stream.told");

/** Marks `err` as already told to the client. */
export const toldClient = told.set;
export const clientWasTold = told.has;
