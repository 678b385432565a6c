// A deliberate leak, to show that the soak criterion trips on one: `npm run bench:soak -- --leak-bytes N` preloads
// this into the gateway process (plain JS: it is loaded with --import before tsx), which then keeps N bytes for
// every HTTP request it receives, forever — what a leaked per-request object (a listener, a map entry) does.
import http from "node:http";

const bytes = Number(process.env.MG_SOAK_LEAK_BYTES || 0);
const kept = [];
if (bytes > 0) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    // A flat string of exactly `bytes` one-byte characters on the JS heap ("x".repeat(n) would share its
    // pieces between requests and keep far less).
    if (event === "request") kept.push(Buffer.alloc(bytes, 120).toString("latin1"));
    return emit.call(this, event, ...args);
  };
}
