// A body refused while the client is still sending it (413 past max_body_bytes, 401 before the body is asked for):
// the client still reads the answer. The gateway ends its side and drains what is still coming for a while
// (core/net/lingering-close.ts); before, it closed the socket with the rest of the body unread, the kernel answered
// with a reset, and a client that had not read the answer yet lost it (ECONNRESET instead of the 413).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "node:net";
import { ABUSE_KEY, startAbuseGateway, type AbuseGateway } from "./helpers/abuse-gateway.ts";
import { head, parseResponses } from "./helpers/raw-http.ts";

let gw: AbuseGateway;
beforeAll(async () => {
  gw = await startAbuseGateway();
}, 30_000);
afterAll(async () => {
  await gw?.close();
});

/**
 * Send the headers and `bytes` of body as fast as the socket takes them, without reading, then read what came back.
 * A client busy writing a large upload reads its answer only afterwards, as this one does.
 */
function uploadThenRead(headers: Record<string, string | number>, bytes: number): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(gw.port, "127.0.0.1");
    socket.pause();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on("error", (e) => (error ??= (e as NodeJS.ErrnoException).code));
    socket.on("data", (d) => chunks.push(d));
    socket.on("close", () => resolve({ text: Buffer.concat(chunks).toString("latin1"), error }));
    const piece = Buffer.alloc(256 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < bytes && !socket.destroyed) {
        sent += piece.length;
        if (!socket.write(piece)) return void socket.once("drain", pump);
      }
      // Done writing (or the gateway stopped taking it): now read the answer.
      setTimeout(() => socket.resume(), 300);
    };
    socket.write(head("POST", "/api/v1/chat/completions", headers), pump);
  });
}

describe("an answer sent before the body was read", () => {
  it("413 past max_body_bytes reaches a client still uploading", async () => {
    const size = 11 * 1024 * 1024; // over the default 10 MiB
    const r = await uploadThenRead({ host: "gw", "content-type": "application/json", authorization: `Bearer ${ABUSE_KEY}`, "content-length": size }, size);
    const [answer] = parseResponses(Buffer.from(r.text, "latin1"));
    expect(answer?.status, `${r.error ?? ""} ${r.text.slice(0, 200)}`).toBe(413);
    expect(answer!.json.error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("401 before the body reaches a client still uploading", async () => {
    const size = 8 * 1024 * 1024;
    const r = await uploadThenRead({ host: "gw", "content-type": "application/json", authorization: "Bearer mg_live_unknownkey0000000000", "content-length": size }, size);
    const [answer] = parseResponses(Buffer.from(r.text, "latin1"));
    expect(answer?.status, `${r.error ?? ""} ${r.text.slice(0, 200)}`).toBe(401);
  });
});
