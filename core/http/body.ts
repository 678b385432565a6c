// Request bodies read straight from the Node request: size-limited, UTF-8 JSON only, of a depth, a number of
// objects and arrays (json-budget.ts) and with numbers the rest of the gateway can handle.
import type { IncomingMessage } from "node:http";
import { isUtf8 } from "node:buffer";
import type { Transform } from "node:stream";
import { GatewayError } from "../errors.ts";
import { checkJsonShape, MAX_JSON_DEPTH } from "./json-shape.ts";
import { JsonBudget, MAX_JSON_CONTAINERS, MAX_JSON_MEMBERS } from "./json-budget.ts";
import { bodyDecoder, undecodable } from "./body-encoding.ts";

export async function readJsonBody(req: IncomingMessage, limit: number, badCode: "INVALID_REQUEST" | "BAD_REQUEST"): Promise<unknown> {
  const type = req.headers["content-type"];
  if (!type || !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new GatewayError(400, badCode, `Content-Type must be application/json (got ${type ? JSON.stringify(type) : "none"})`, {
      details: { field: "content-type" },
    });
  }
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) throw tooLarge(limit);
  const decoder = bodyDecoder(req);
  const budget = new JsonBudget();
  const inspect = (chunk: Buffer) => {
    const over = budget.feed(chunk);
    return over && overBudget(over, badCode);
  };
  const raw = decoder ? await readDecoded(req, decoder, limit, inspect, badCode) : await readRaw(req, limit, inspect);
  // JSON is UTF-8 (RFC 8259); decoding invalid bytes would silently turn them into U+FFFD and forward that.
  if (!isUtf8(raw)) throw new GatewayError(400, badCode, "Request body is not valid UTF-8", { details: { field: "(body)" } });
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(raw).toString("utf8"));
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

/**
 * The body's bytes, from 'data' events: an async iterator over the request cost a few promises and ~2 KB per
 * request (bench/alloc). Past the limit (or once `inspect` refuses a chunk) it stops collecting but leaves the request
 * flowing: the answer still has to go out on this socket, Node discards the rest of the body once the response is
 * sent, and `connection: close` ends it.
 */
function readRaw(req: IncomingMessage, limit: number, inspect: (chunk: Buffer) => GatewayError | undefined, client: IncomingMessage = req): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: unknown, body?: Buffer) => {
      if (settled) return;
      settled = true;
      // Nothing of the raw body stays reachable from the request: a stream's request lives as long as the stream.
      // After a refusal (too large) 'data' stays subscribed so the rest drains and is dropped.
      chunks.length = 0;
      if (!err) req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", finish);
      client.off("close", onClose);
      if (err) reject(err);
      else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      const refused = size > limit ? tooLarge(limit) : inspect(chunk);
      if (refused) finish(refused);
      else chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    // The client went away before the body ended (the response's 'close' aborts the request's work meanwhile).
    // (Reading a decoder, the request may close once all of it arrived, before the decoder's last bytes.)
    const onClose = () => (client === req || !client.complete) && finish(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", finish);
    client.on("close", onClose);
  });
}

/**
 * The decoded bytes of an encoded body (body-encoding.ts), bounded as readRaw bounds a plain one. The bytes as sent
 * are bounded by the same limit: a coding can send any number of bytes that decode to nothing (empty deflate blocks),
 * and without it 1 000 MB of them before a small JSON was read to the end. Past either limit, a refused chunk or a
 * decoding error, the decoder is stopped and the rest of the body drains unread.
 */
async function readDecoded(
  req: IncomingMessage, decoder: Transform, limit: number, inspect: (chunk: Buffer) => GatewayError | undefined, badCode: "INVALID_REQUEST" | "BAD_REQUEST",
): Promise<Buffer> {
  let bad = false;
  let refused: GatewayError | undefined;
  let sent = 0;
  const countSent = (chunk: Buffer) => {
    sent += chunk.length;
    if (sent > limit && !refused) decoder.destroy((refused = tooLarge(limit, "as sent")));
  };
  decoder.once("error", () => (bad = true));
  req.on("data", countSent);
  req.pipe(decoder);
  try {
    return await readRaw(decoder as unknown as IncomingMessage, limit, inspect, req);
  } catch (err) {
    req.unpipe(decoder);
    decoder.destroy();
    req.resume();
    throw refused ?? (bad ? undecodable(req, badCode) : err);
  } finally {
    req.off("data", countSent);
  }
}

/**
 * One leading UTF-8 byte order mark left out: Windows tools write it (PowerShell's -InFile of a file Notepad saved),
 * RFC 8259 §8.1 lets a parser ignore it, and JSON.parse's "Unexpected token" named a character no one can see.
 */
function withoutBom(raw: Buffer): Buffer {
  return raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
}

function tooLarge(limit: number, asSent?: "as sent"): GatewayError {
  const what = asSent ? "Request body as sent (before its Content-Encoding is decoded)" : "Request body";
  return new GatewayError(413, "PAYLOAD_TOO_LARGE", `${what} is larger than the limit of ${limit} bytes (server.max_body_bytes)`, {
    details: { limit },
    headers: { connection: "close" },
  });
}

function overBudget(over: "containers" | "members", badCode: "INVALID_REQUEST" | "BAD_REQUEST"): GatewayError {
  const [what, max] = over === "containers" ? ["objects and arrays", MAX_JSON_CONTAINERS] : ["array elements and object members", MAX_JSON_MEMBERS];
  return new GatewayError(400, badCode, `Request body has more than ${max} JSON ${what}`, {
    details: { field: "(body)", [over === "containers" ? "max_containers" : "max_members"]: max },
    headers: { connection: "close" },
  });
}
