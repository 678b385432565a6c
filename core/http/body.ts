// Request bodies read straight from the Node request: size-limited, JSON only.
import type { IncomingMessage } from "node:http";
import { GatewayError } from "../errors.ts";

export async function readJsonBody(req: IncomingMessage, limit: number, badCode: "INVALID_REQUEST" | "BAD_REQUEST"): Promise<unknown> {
  const type = req.headers["content-type"];
  if (!type || !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new GatewayError(400, badCode, `Content-Type must be application/json (got ${type ? JSON.stringify(type) : "none"})`, {
      details: { field: "content-type" },
    });
  }
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early must not destroy the request (and with it the socket): the 413 still has to go out.
  // Node discards the rest of the body once the response is sent, and `connection: close` ends the socket.
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new GatewayError(400, badCode, `Request body is not valid JSON: ${(err as Error).message}`, { details: { field: "(body)" } });
  }
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than the limit of ${limit} bytes`, {
    details: { limit },
    headers: { connection: "close" },
  });
}
