// A client's FIN while its complete request waits for the answer. It may have half-closed (shutdown(SHUT_WR): it has
// sent all it will and still reads, RFC 9112 §9.6) or closed the socket outright (a fetch aborted, curl -m): TCP sends
// the same FIN for both. Node used to end the connection on any FIN, so a half-closed client never got its answer.
// The server now keeps it open (server.ts sets httpAllowHalfOpen) and tells the two apart by writing an interim
// `100 Continue` — which every HTTP/1.1 client must accept and skip, even unasked (RFC 9110 §15.2) — twice: a socket
// that was closed answers the first with a reset, so the second fails, the connection closes and the request is
// cancelled as before; a half-closed client reads both and then its answer. HTTP/1.0 has no interim responses: a FIN
// there still cancels at once, and so does a FIN once the answer has begun (a stream whose next event may be long in
// coming: it can no longer carry an interim response, and the client that half-closes does so after its request).
import type { IncomingMessage, ServerResponse } from "node:http";

/** Between the two interim responses: time for a closed socket's reset to come back (a round trip). */
const PROBE_GAP_MS = 250;

/** Watches `req`'s connection for the client's FIN until `res` is done. */
export function answerAfterHalfClose(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  let timer: NodeJS.Timeout | undefined;
  const unanswered = () => !res.headersSent && !res.writableEnded && !res.destroyed;
  const onEnd = () => {
    // An incomplete request was already refused (400) by Node's parser.
    if (!req.complete || res.writableEnded || res.destroyed) return;
    if (req.httpVersion === "1.0" || res.headersSent) {
      socket.destroy();
      return;
    }
    res.writeContinue();
    timer = setTimeout(() => unanswered() && res.writeContinue(), PROBE_GAP_MS);
    timer.unref();
  };
  if (socket.readableEnded) queueMicrotask(onEnd);
  else socket.once("end", onEnd);
  res.once("close", () => {
    socket.off("end", onEnd);
    clearTimeout(timer);
  });
}
