// A stalling upstream: it answers at once and then trickles bytes that are never an answer, so a per-read timer
// never fires. What it does is chosen by the upstream model id the gateway sends:
//   OpenAI chat (POST /v1/chat/completions), "trickle": a JSON request gets 200 application/json and then one space
//     every TRICKLE_EVERY_MS; a stream gets 200 text/event-stream and then only `: keepalive` comments, as often;
//   Bedrock (POST /model/trickle/converse-stream): 200 application/vnd.amazon.eventstream and then a real
//     messageStart frame, one byte every TRICKLE_EVERY_MS (each byte is progress to a per-read timer, no frame is whole
//     for seconds);
//   Gemini (POST /v1beta/models/<m>:streamGenerateContent?alt=sse), "cut": two content events, no finishReason, and
//     the response ends normally (a cut Gemini stream looks like this: Gemini sends no end marker).
// Trickling stops when the gateway drops the connection; `open` counts the responses still trickling.
import type { ServerResponse } from "node:http";
import { listenLoopback, readRequest, type Recorded } from "./http-fake.ts";
import { eventFrame } from "./bedrock.ts";

export const TRICKLE_EVERY_MS = 100;

export interface TrickleUpstream {
  origin: string;
  requests: Recorded[];
  /** Responses still being trickled (the gateway has not dropped them yet). */
  open: number;
  close(): Promise<void>;
}

export async function startTrickleUpstream(): Promise<TrickleUpstream> {
  const timers = new Set<NodeJS.Timeout>();
  /** Writes `bytes` every TRICKLE_EVERY_MS; a Uint8Array is written one byte at a time instead (once). */
  const trickle = (res: ServerResponse, bytes: string | Uint8Array) => {
    up.open++;
    let at = 0;
    const t = setInterval(() => {
      if (res.destroyed) return;
      if (typeof bytes === "string") res.write(bytes);
      else if (at < bytes.length) res.write(bytes.subarray(at, ++at));
    }, TRICKLE_EVERY_MS);
    timers.add(t);
    res.on("close", () => {
      up.open--;
      clearInterval(t);
      timers.delete(t);
    });
  };
  const server = await listenLoopback(async (req, res) => {
    const rec = await readRequest(req);
    up.requests.push(rec);
    if (rec.path === "/v1/chat/completions") {
      if (rec.body?.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": keepalive\n\n");
        trickle(res, ": keepalive\n\n");
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(" ");
        trickle(res, " ");
      }
      return;
    }
    if (rec.path === "/model/trickle/converse-stream") {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      trickle(res, eventFrame("messageStart", { role: "assistant" }));
      return;
    }
    if (/^\/v1beta\/models\/cut:streamGenerateContent\?alt=sse$/.test(rec.path)) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const text of ["Once upon", " a time"]) {
        const ev = { candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 }, modelVersion: "cut" };
        res.write(`data: ${JSON.stringify(ev)}\r\n\r\n`);
      }
      res.end();
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `no route ${rec.path}` } }));
  });
  const up: TrickleUpstream = {
    origin: server.origin,
    requests: [],
    open: 0,
    close: async () => {
      for (const t of timers) clearInterval(t);
      await server.close();
    },
  };
  return up;
}
