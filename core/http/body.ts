// Request bodies read straight from the Node request: size-limited, UTF-8 JSON only, of a depth, a number of
// objects and arrays (json-budget.ts) and with numbers the rest of the gateway can handle.
import type { IncomingMessage } from "node:http";
import { isUtf8 } from "node:buffer";
import { GatewayError } from "../errors.ts";
import { checkJsonShape, MAX_JSON_DEPTH } from "./json-shape.ts";
import { JsonBudget, MAX_JSON_CONTAINERS, MAX_JSON_MEMBERS } from "./json-budget.ts";

export async function readJsonBody(req: IncomingMessage, limit: number, badCode: "INVALID_REQUEST" | "BAD_REQUEST"): Promise<unknown> {
  const type = req.headers["content-type"];
  if (!type || !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new GatewayError(400, badCode, `Content-Type must be application/json (got ${type ? JSON.stringify(type) : "none"})`, {
      details: { field: "content-type" },
    });
  }
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) throw tooLarge(limit);
  const budget = new JsonBudget();
  const raw = await readRaw(req, limit, (chunk) => {
    const over = budget.feed(chunk);
    return over && overBudget(over, badCode);
  });
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

/**
 * The body's bytes, from 'data' events: an async iterator over the request cost a few promises and ~2 KB per
 * request (bench/alloc). Past the limit (or once `inspect` refuses a chunk) it stops collecting but leaves the request
 * flowing: the answer still has to go out on this socket, Node discards the rest of the body once the response is
 * sent, and `connection: close` ends it.
 */
function readRaw(req: IncomingMessage, limit: number, inspect: (chunk: Buffer) => GatewayError | undefined): Promise<Buffer> {
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
      req.off("close", onClose);
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
    const onClose = () => finish(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", finish);
    req.on("close", onClose);
  });
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than the limit of ${limit} bytes`, {
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
