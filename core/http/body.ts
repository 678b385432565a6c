// Request bodies read straight from the Node request: size-limited, UTF-8 JSON only, of a depth and with numbers
// the rest of the gateway can handle.
import type { IncomingMessage } from "node:http";
import { isUtf8 } from "node:buffer";
import { GatewayError } from "../errors.ts";
import { checkJsonShape, MAX_JSON_DEPTH } from "./json-shape.ts";

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
  const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  // JSON is UTF-8 (RFC 8259); decoding invalid bytes would silently turn them into U+FFFD and forward that.
  if (!isUtf8(raw)) throw new GatewayError(400, badCode, "Request body is not valid UTF-8", { details: { field: "(body)" } });
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw new GatewayError(400, badCode, `Request body is not valid JSON: ${(err as Error).message}`, { details: { field: "(body)" } });
  }
  const problem = checkJsonShape(value);
  if (problem?.kind === "depth") {
    throw new GatewayError(400, badCode, `Request body nests deeper than ${MAX_JSON_DEPTH} levels (at ${problem.field})`, {
      details: { field: problem.field, max_depth: MAX_JSON_DEPTH },
    });
  }
  if (problem) throw new GatewayError(400, badCode, `Invalid request: ${problem.field} is a number too large to represent`, { details: { field: problem.field } });
  return value;
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than the limit of ${limit} bytes`, {
    details: { limit },
    headers: { connection: "close" },
  });
}
