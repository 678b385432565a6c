// A fake Vertex AI host (reference protocols-2 §3): it checks what Vertex's front end checks — a bearer access token
// the fake token endpoint issued and that has not expired (401 UNAUTHENTICATED in Google's envelope otherwise), the
// URL shape (v1/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}:{method}), and
// for Claude the Vertex body (anthropic_version "vertex-2023-10-16", no key Claude on Vertex does not take: model,
// thread…: claude-cloud-keys.ts). Model answers come from the faithful Gemini and Anthropic fakes behind it (the
// request rewritten to their API, the answer relayed byte for byte), with what Vertex adds to Gemini answers:
// createTime, usageMetadata.trafficType, and in streams usageMetadata with only trafficType on every chunk but the last.
import type { IncomingMessage, ServerResponse } from "node:http";
import { approxTokens, fakeVector, listenLoopback, readRequest, sendJson } from "./http-fake.ts";
import type { RecordedRequest } from "./openai.ts";
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from "./gemini.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from "./anthropic.ts";
import type { FakeTokenEndpoint } from "./vertex-auth.ts";
import { extraKeyError, VERTEX_CLAUDE_KEYS } from "./claude-cloud-keys.ts";

const STATUS: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" };

export function googleError(status: number, message: string, details: unknown[] = []) {
  return { error: { code: status, message, status: STATUS[status] ?? "UNKNOWN", ...(details.length ? { details } : {}) } };
}

/** A failure Vertex's front end answers before the model sees the request (Google's envelope, for both publishers). */
export interface VertexFailure { status: number; message?: string; publisher?: "google" | "anthropic"; retryDelay?: string }

export interface FakeVertex {
  baseUrl: string;
  project: string;
  location: string;
  requests: RecordedRequest[];
  failures: VertexFailure[];
  /** The model fakes behind the host: script their own failures (die-mid-stream, error-event) there. */
  gemini: FakeGemini;
  anthropic: FakeAnthropic;
  close(): Promise<void>;
}

const QUOTA = (model: string) => `Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model with base model: ${model}. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.`;
const UNAUTHENTICATED = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.";
const PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):([A-Za-z]+)(\?alt=sse)?$/;

/** Embeddings (:predict): instances of {content, task_type?}; gemini-embedding-001 takes one instance per request. */
function predictAnswer(model: string, body: any): [number, unknown] {
  const instances = body?.instances;
  if (!Array.isArray(instances) || !instances.length || instances.some((i: any) => typeof i?.content !== "string")) return [400, googleError(400, "Invalid instances: each needs a content string.")];
  const max = /gemini-embedding/.test(model) ? 1 : 250;
  if (instances.length > max) return [400, googleError(400, `Unable to submit request because the model ${model} supports up to ${max} instances per request. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/embeddings/get-text-embeddings`)];
  const dims = body.parameters?.outputDimensionality ?? 3072;
  return [200, {
    predictions: instances.map((i: any) => ({ embeddings: { values: fakeVector(i.content, dims, i.task_type ?? ""), statistics: { token_count: approxTokens(i.content), truncated: false } } })),
    metadata: { billableCharacterCount: instances.reduce((n: number, i: any) => n + i.content.length, 0) },
  }];
}

export async function startFakeVertex(tokens: FakeTokenEndpoint, opts: { project?: string; location?: string } = {}): Promise<FakeVertex> {
  const gemini = await startFakeGemini();
  const anthropic = await startFakeAnthropic();
  const fake: FakeVertex = {
    baseUrl: "",
    project: opts.project ?? "fake-project",
    location: opts.location ?? "us-east5",
    requests: [],
    failures: [],
    gemini,
    anthropic,
    close: async () => {
      await server.close();
      await gemini.close();
      await anthropic.close();
    },
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const { method, path, headers, body } = await readRequest(req);
    fake.requests.push({ method, path, headers, body });
    const auth = String(headers.authorization ?? "");
    if (!auth.startsWith("Bearer ") || !tokens.valid(auth.slice(7))) return sendJson(res, 401, googleError(401, UNAUTHENTICATED));
    const m = PATH.exec(path);
    if (method !== "POST" || !m) return sendJson(res, 404, googleError(404, `The requested URL ${path} was not found on this server.`));
    const [, project, location, publisher, model, verb, sse] = m as unknown as string[];
    if (project !== fake.project) return sendJson(res, 403, googleError(403, `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${project}/locations/${location}/publishers/${publisher}/models/${model}' (or it may not exist).`));
    if (location !== fake.location) return sendJson(res, 404, googleError(404, `Publisher Model \`projects/${project}/locations/${location}/publishers/${publisher}/models/${model}\` not found.`));
    const failure = fake.failures.findIndex((f) => !f.publisher || f.publisher === publisher);
    if (failure >= 0) {
      const f = fake.failures.splice(failure, 1)[0]!;
      const details = f.retryDelay ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: f.retryDelay }] : [];
      return sendJson(res, f.status, googleError(f.status, f.message ?? (f.status === 429 ? QUOTA(model!) : `fake vertex failure ${f.status}`), details));
    }
    if (publisher === "google" && verb === "predict") return sendJson(res, ...predictAnswer(model!, body));
    if (publisher === "google" && verb === "countTokens") {
      // Vertex's CountTokensRequest has contents/systemInstruction/tools at the top level; the Gemini fake counts a
      // generateContentRequest the same way.
      if (body?.generateContentRequest) return sendJson(res, 400, googleError(400, 'Invalid JSON payload received. Unknown name "generateContentRequest": Cannot find field.'));
      const g = { model: `models/${model}`, contents: body?.contents, systemInstruction: body?.systemInstruction, tools: body?.tools };
      return relay(res, await fetch(`${gemini.baseUrl}/v1beta/models/${model}:countTokens`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": FAKE_GEMINI_KEY }, body: JSON.stringify({ generateContentRequest: g }) }));
    }
    if (publisher === "anthropic" && model === "count-tokens" && verb === "rawPredict") {
      // Anthropic's Vertex SDK: the model stays in the body here, anthropic_version is added.
      if (body?.anthropic_version !== "vertex-2023-10-16") return sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: "anthropic_version: Input should be 'vertex-2023-10-16'" } });
      const { anthropic_version: _v, ...rest } = body;
      return relay(res, await fetch(`${anthropic.baseUrl}/v1/messages/count_tokens`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": FAKE_ANTHROPIC_KEY, "anthropic-version": "2023-06-01" }, body: JSON.stringify(rest) }));
    }
    if (publisher === "google" && (verb === "generateContent" || verb === "streamGenerateContent")) {
      if (verb === "streamGenerateContent" && !sse) return sendJson(res, 400, googleError(400, "this fake only streams with alt=sse"));
      // Vertex insists on a role on every turn (the Gemini API defaults it to user).
      if (Array.isArray(body?.contents) && body.contents.some((c: any) => c?.role !== "user" && c?.role !== "model")) {
        return sendJson(res, 400, googleError(400, "Please use a valid role: user, model."));
      }
      return relayGemini(res, `${gemini.baseUrl}/v1beta/models/${model}:${verb}${sse ?? ""}`, body, verb === "streamGenerateContent");
    }
    if (publisher === "anthropic" && (verb === "rawPredict" || verb === "streamRawPredict")) {
      // Anthropic's own validation, in its own error shape (the model answers these, not Google's front end).
      const invalid = (message: string) => sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message } });
      if (body?.anthropic_version !== "vertex-2023-10-16") return invalid("anthropic_version: Input should be 'vertex-2023-10-16'");
      const extra = extraKeyError(body, VERTEX_CLAUDE_KEYS); // model included: the URL holds it
      if (extra) return invalid(extra);
      if ((verb === "streamRawPredict") !== (body.stream === true)) return invalid(`stream: ${verb} needs stream ${verb === "streamRawPredict"}`);
      const { anthropic_version: _v, ...rest } = body;
      const h: Record<string, string> = { "content-type": "application/json", "x-api-key": FAKE_ANTHROPIC_KEY, "anthropic-version": "2023-06-01" };
      if (headers["anthropic-beta"]) h["anthropic-beta"] = String(headers["anthropic-beta"]);
      return relay(res, await fetch(`${anthropic.baseUrl}/v1/messages`, { method: "POST", headers: h, body: JSON.stringify({ ...rest, model }) }));
    }
    return sendJson(res, 400, googleError(400, `Invalid method ${verb} for publisher ${publisher}.`));
  }

  async function relayGemini(res: ServerResponse, url: string, body: unknown, stream: boolean) {
    const up = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": FAKE_GEMINI_KEY }, body: JSON.stringify(body) });
    if (up.status !== 200) return relay(res, up);
    const createTime = new Date().toISOString();
    if (!stream) {
      const json: any = await up.json();
      return sendJson(res, 200, { ...json, createTime, usageMetadata: { ...json.usageMetadata, trafficType: "ON_DEMAND" } });
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    // Re-frame chunk by chunk (Vertex's framing is Gemini's: data: <json>\r\n\r\n); only the last keeps the counts.
    let buf = "";
    let pending: any;
    const emit = (chunk: any, last: boolean) => {
      const usageMetadata = last ? { ...chunk.usageMetadata, trafficType: "ON_DEMAND" } : { trafficType: "ON_DEMAND" };
      res.write(`data: ${JSON.stringify({ ...chunk, createTime, usageMetadata })}\r\n\r\n`);
    };
    try {
      for await (const piece of up.body as unknown as AsyncIterable<Uint8Array>) {
        buf += Buffer.from(piece).toString("utf8");
        let at: number;
        while ((at = buf.indexOf("\r\n\r\n")) >= 0) {
          const frame = buf.slice(0, at);
          buf = buf.slice(at + 4);
          if (pending) emit(pending, false);
          pending = JSON.parse(frame.replace(/^data: /, ""));
        }
      }
    } catch {
      res.destroy(); // the model fake died mid-stream: so does this connection
      return;
    }
    if (pending) emit(pending, true);
    res.end();
  }

  async function relay(res: ServerResponse, up: Response) {
    const h: Record<string, string> = {};
    up.headers.forEach((v, k) => {
      if (k === "content-type" || k === "request-id") h[k] = v;
    });
    res.writeHead(up.status, h);
    try {
      for await (const piece of up.body as unknown as AsyncIterable<Uint8Array>) res.write(piece);
    } catch {
      res.destroy();
      return;
    }
    res.end();
  }

  const server = await listenLoopback((req, res) => void handle(req, res));
  fake.baseUrl = server.origin;
  return fake;
}
