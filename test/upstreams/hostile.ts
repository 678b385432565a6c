// A hostile upstream: it answers every request (any protocol, any path) by echoing the request back inside its
// error — every header as it arrived (the gateway's Authorization / x-api-key / x-goog-api-key / SigV4 /
// x-amz-security-token), partial forms of the credential values (cut short, URL-encoded), and the body when it is a
// form (a token exchange's signed assertion). Proxies and self-hosted servers do this; so can a tenant's BYOK
// base_url. The echo is framed as the protocol the path names (OpenAI, Responses, Anthropic, Gemini/Vertex,
// Bedrock's JSON errors and event stream), so the gateway's own parsing reaches the text.
//
// Modes say how it fails, and are meant to grow: add one to MODES (and to HostileMode) for a new way of failing.
import type { ServerResponse } from "node:http";
import { listenLoopback, readRequest, type Recorded } from "./http-fake.ts";
import { eventFrame, exceptionFrame } from "./bedrock.ts";

export type HostileMode =
  /** HTTP 401 with the protocol's JSON error body (streams included: they fail before the first byte). */
  | "status"
  /** HTTP 500 with the echo as text/plain (a proxy's error page). */
  | "text"
  /** A stream that starts (one event of content), then fails in band with the protocol's error event; JSON requests get "status". */
  | "midstream";

/** What the fake tells apart in a request's path: the protocol of the answer. */
type Family = "openai" | "responses" | "anthropic" | "google" | "bedrock";

export interface HostileUpstream {
  origin: string;
  mode: HostileMode;
  /** Every request received, in order. */
  requests: Recorded[];
  /** Access tokens this fake issued at POST /token (a Vertex service account's exchange). */
  issued: string[];
  /** POST /token refuses (400, echoing the request: its body holds the signed assertion) instead of issuing. */
  refuseTokens: boolean;
  close(): Promise<void>;
}

const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token"];

/** The request as a proxy would quote it back: request line, headers, partial credentials, a form body. */
export function echoOf(req: Recorded): string {
  const lines = [`${req.method} ${req.path}`];
  for (const [name, value] of Object.entries(req.headers)) lines.push(`${name}: ${String(value)}`);
  for (const name of CREDENTIAL_HEADERS) {
    const v = req.headers[name];
    if (typeof v !== "string") continue;
    lines.push(`${name} (cut): ${v.slice(0, 24)}...`, `${name} (url-encoded): ${encodeURIComponent(v)}`);
  }
  if (String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) lines.push(`body: ${req.raw.toString("utf8")}`);
  return lines.join("\n");
}

function familyOf(path: string): Family {
  if (path.startsWith("/model/")) return "bedrock";
  if (/:(stream)?rawPredict\b/i.test(path) || /\/messages(\/count_tokens)?(\?|$)/.test(path)) return "anthropic";
  if (/\/[\w.@-]+:\w+/.test(path)) return "google";
  if (/\/responses(\?|$)/.test(path)) return "responses";
  return "openai";
}

function wantsStream(req: Recorded): boolean {
  return req.body?.stream === true || /stream|alt=sse|invoke-with-response-stream/i.test(req.path);
}

/** The protocol's JSON error body carrying the echo (message and a copy of the headers, as some servers add). */
function errorBody(family: Family, status: number, echo: string, req: Recorded): { body: unknown; headers: Record<string, string> } {
  switch (family) {
    case "anthropic":
      return { body: { type: "error", error: { type: "authentication_error", message: echo } }, headers: {} };
    case "google":
      return { body: { error: { code: status, message: echo, status: "UNAUTHENTICATED", details: [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", detail: echo }] } }, headers: {} };
    case "bedrock":
      return { body: { message: echo }, headers: { "x-amzn-errortype": "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/" } };
    default:
      return { body: { error: { message: echo, type: "invalid_request_error", code: "invalid_api_key", headers: req.headers } }, headers: {} };
  }
}

const sse = (event: string | undefined, data: unknown) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

/** A started stream that fails in band, in the family's framing. */
function failingStream(family: Family, echo: string, req: Recorded, res: ServerResponse): void {
  if (family === "bedrock") {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "hostile-1" });
    if (req.path.includes("invoke-with-response-stream")) {
      // InvokeModel: Anthropic's events, each base64 in a `chunk` event.
      const chunk = (e: unknown) => eventFrame("chunk", { bytes: Buffer.from(JSON.stringify(e)).toString("base64") });
      res.write(chunk({ type: "message_start", message: { id: "msg_hostile", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } }));
      res.write(chunk({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }));
      res.write(chunk({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }));
    } else {
      res.write(eventFrame("messageStart", { role: "assistant" }));
      res.write(eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Hel" } }));
    }
    res.end(exceptionFrame("internalServerException", { message: echo }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  switch (family) {
    case "anthropic":
      res.write(sse("message_start", { type: "message_start", message: { id: "msg_hostile", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }));
      res.write(sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }));
      res.write(sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }));
      res.end(sse("error", { type: "error", error: { type: "api_error", message: echo } }));
      return;
    case "google":
      res.write(sse(undefined, { candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1, totalTokenCount: 6 } }));
      res.end(sse(undefined, { error: { code: 500, message: echo, status: "INTERNAL" } }));
      return;
    case "responses": {
      const response = { id: "resp_hostile", object: "response", created_at: 1, status: "in_progress", model: "m", output: [] };
      // Some output first, as in the other families: a failure before any (while the gateway holds the opening
      // events) falls back or is a 502, not an in-band error.
      const item = { id: "msg_hostile", type: "message", status: "in_progress", role: "assistant", content: [] };
      res.write(sse("response.created", { type: "response.created", sequence_number: 0, response }));
      res.write(sse("response.output_item.added", { type: "response.output_item.added", sequence_number: 1, output_index: 0, item }));
      res.write(sse("response.content_part.added", { type: "response.content_part.added", sequence_number: 2, item_id: item.id, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }));
      res.write(sse("response.output_text.delta", { type: "response.output_text.delta", sequence_number: 3, item_id: item.id, output_index: 0, content_index: 0, delta: "Hel" }));
      res.write(sse("error", { type: "error", sequence_number: 4, code: "server_error", message: echo, param: null }));
      res.end(sse("response.failed", { type: "response.failed", sequence_number: 5, response: { ...response, status: "failed", error: { code: "server_error", message: echo } } }));
      return;
    }
    default:
      res.write(sse(undefined, { id: "chatcmpl-hostile", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }] }));
      res.end(sse(undefined, { error: { message: echo, type: "server_error", code: null } }));
  }
}

/** How each mode answers a request (the token endpoint aside). */
const MODES: Record<HostileMode, (family: Family, req: Recorded, res: ServerResponse) => void> = {
  status(family, req, res) {
    const { body, headers } = errorBody(family, 401, echoOf(req), req);
    res.writeHead(401, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  },
  text(_family, req, res) {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(`Upstream proxy error while handling:\n${echoOf(req)}`);
  },
  midstream(family, req, res) {
    if (wantsStream(req)) failingStream(family, echoOf(req), req, res);
    else MODES.status(family, req, res);
  },
};

export async function startHostileUpstream(mode: HostileMode = "status"): Promise<HostileUpstream> {
  let n = 0;
  const fake: HostileUpstream = { origin: "", mode, requests: [], issued: [], refuseTokens: false, close: async () => {} };
  const server = await listenLoopback(async (req, res) => {
    const rec = await readRequest(req);
    fake.requests.push(rec);
    if (rec.path === "/token") {
      if (fake.refuseTokens) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "invalid_grant", error_description: `Invalid JWT: ${echoOf(rec)}` }));
        return;
      }
      const token = `ya29.hostile-issued-${++n}-c29tZS1vcGFxdWUtdG9rZW4tdmFsdWU`;
      fake.issued.push(token);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: "Bearer" }));
      return;
    }
    MODES[fake.mode](familyOf(rec.path.split("?")[0]!), rec, res);
  });
  fake.origin = server.origin;
  fake.close = () => server.close();
  return fake;
}
