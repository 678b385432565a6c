// A deliberate leak, to show that the soak criterion trips on one: `npm run bench:soak -- --leak-bytes N` preloads
// this into the gateway process (plain JS: it is loaded with --import before tsx), which then keeps N bytes for
// every HTTP request it receives, forever — what a leaked per-request object (a listener, a map entry) does.
import http from "node:http";

const bytes = Number(process.env.MG_SOAK_LEAK_BYTES || 0);
const kept = [];
if (bytes > 0) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === "request") kept.push({ at: Date.now(), data: "x".repeat(bytes) }); // on the JS heap, like a leaked request object
    return emit.call(this, event, ...args);
  };
}
