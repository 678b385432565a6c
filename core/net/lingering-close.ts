// A response that closes its connection while the client is still sending (a body refused as it arrived: 413, too
// many JSON containers, a 401 before the body was asked for): Node destroys the socket once the response is written,
// and a socket closed with unread bytes in its receive buffer is reset, not closed. A reset reaching the client before
// it read the response throws the response away: the client sees ECONNRESET instead of the 400 or 413 that says
// why. As nginx's lingering close does, the gateway ends its side instead and keeps reading (and dropping) what
// the client still sends, for a bounded time, then closes.
import { Socket } from "node:net";

/** Longest the gateway keeps reading from a client after it answered and ended its side. */
export const LINGER_MS = 2_000;

const destroySoon = Socket.prototype.destroySoon;

function lingeringDestroySoon(this: Socket): void {
  // Nothing more can arrive (the client ended its side) or nothing to protect: Node's own way.
  if (this.destroyed || this.readableEnded) {
    destroySoon.call(this);
    return;
  }
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once("close", () => clearTimeout(timer));
  // FIN once the response is out; what the client still sends is read by the HTTP parser and dropped (Node dumps
  // the request's unread body); the client's own FIN, or the timer, closes the socket.
  this.end();
}

/** Make this connection linger instead of resetting when a response closes it (see above). */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = lingeringDestroySoon;
}
