// A fake Gemini API upstream, faithful to the reference (§4.3): generateContent and
// streamGenerateContent?alt=sse with `data: <json>\r\n\r\n` framing (CRLF), no [DONE], cumulative usageMetadata on
// every chunk, finishReason on the last candidate chunk, function calls whole in one chunk (finishReason STOP),
// thought parts when includeThoughts is set, Google's error envelope with RetryInfo; googleSearch grounding (answer with
// groundingMetadata), refused next to function declarations as Gemini 2.x does; the schema formats and enums Gemini
// refuses, refused (gemini-schema.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { alnum, listenLoopback, readRequest } from "./http-fake.ts";
import type { RecordedRequest } from "./openai.ts";
import { contentsError, structuredAnswer, thinkingError } from "./gemini-checks.ts";
import { schemaError } from "./gemini-schema.ts";
import { conversationText, type AgentScript } from "./scripted-agent.ts";

export const FAKE_GEMINI_KEY = "AIza-fake-gemini-key";

export type GeminiFailure =
  | { kind: "status"; status: number; retryDelay?: string }
  /** Google's envelope as given: a status name and message of Google's own (FAILED_PRECONDITION, ...). */
  | { kind: "google"; status: number; rpcStatus: string; message: string }
  | { kind: "die-mid-stream"; afterChunks: number }
  /** A 200 stream whose only frame is Google's error envelope (how Gemini reports an overload once streaming began). */
  | { kind: "in-band"; code: number; rpcStatus: string; message: string }
  /** A 200 stream whose only frame blocks the prompt: promptFeedback, usage, no candidate. */
  | { kind: "prompt-blocked" };

export interface FakeGemini {
  baseUrl: string;
  requests: RecordedRequest[];
  failures: GeminiFailure[];
  /** Milliseconds between stream chunks. */
  chunkDelayMs: number;
  /** A scripted model (scripted-agent.ts) that decides the turns it recognises before the default answers. */
  script?: AgentScript;
  /** The modelVersion an answer names for the model asked for (a dated version); undefined: the one asked for. */
  answersAs?: (model: string) => string;
  close(): Promise<void>;
}

const TEXT = "Hello from the fake Gemini upstream.";
/** The answer when grounding with Google Search is on, and the metadata Gemini puts beside it. */
export const GROUNDED = "Grounded answer from Google Search.";
const GROUNDING = {
  webSearchQueries: ["latest gateway news"],
  groundingChunks: [{ web: { uri: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/fake", title: "example.com" } }],
  groundingSupports: [{ segment: { startIndex: 0, endIndex: GROUNDED.length, text: GROUNDED }, groundingChunkIndices: [0] }],
};
const SIGNATURE = "CiQB+/8BAgP+EA==";
const STATUS: Record<number, string> = { 400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" };
const words = (t: string) => t.match(/\s*\S+/g) ?? [];

/** Google's answer to a key it does not know: a 400 INVALID_ARGUMENT whose ErrorInfo says API_KEY_INVALID. */
const INVALID_KEY = {
  error: {
    code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT",
    details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } }],
  },
};

function errorBody(status: number, message: string, retryDelay?: string) {
  const details = retryDelay ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay }] : [];
  return { error: { code: status, message, status: STATUS[status] ?? "UNKNOWN", details } };
}

/**
 * models/{m}:countTokens: either `contents` or a `generateContentRequest` (whose `model` must name the same model),
 * never both; answers totalTokens (the same prompt measure generateContent reports, plus system and tools).
 */
export const fakeTotalTokens = (g: any) => JSON.stringify({ contents: g.contents, systemInstruction: g.systemInstruction, tools: g.tools }).length >> 2;
function countTokensAnswer(model: string, headers: IncomingMessage["headers"], body: any): [number, unknown] {
  if (headers["x-goog-api-key"] !== FAKE_GEMINI_KEY) return [400, INVALID_KEY];
  const g = body?.generateContentRequest;
  if (g && body.contents) return [400, errorBody(400, "contents and generate_content_request are mutually exclusive")];
  if (g && g.model !== `models/${model}`) return [400, errorBody(400, `GenerateContentRequest.model: unexpected model name format (${g.model})`)];
  const req = g ?? { contents: body?.contents };
  if (!Array.isArray(req.contents) || !req.contents.length) return [400, errorBody(400, "contents is not specified")];
  const total = fakeTotalTokens(req);
  return [200, { totalTokens: total, promptTokensDetails: [{ modality: "TEXT", tokenCount: total }] }];
}

export async function startFakeGemini(): Promise<FakeGemini> {
  const fake: FakeGemini = {
    baseUrl: "",
    requests: [],
    failures: [],
    chunkDelayMs: 0,
    close: () => server.close(),
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const { method, path, headers, body } = await readRequest(req);
    fake.requests.push({ method, path, headers, body });
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
      res.end(JSON.stringify(json));
    };
    const failure = fake.failures.shift();
    if (failure?.kind === "status") return send(failure.status, errorBody(failure.status, `fake gemini failure ${failure.status}`, failure.retryDelay));
    if (failure?.kind === "google") return send(failure.status, { error: { code: failure.status, message: failure.message, status: failure.rpcStatus } });
    const count = /^\/v1beta\/models\/([^:/]+):countTokens$/.exec(req.url ?? "");
    if (req.method === "POST" && count) return send(...countTokensAnswer(count[1]!, req.headers, body));
    const m = /^\/v1beta\/models\/([^:/]+):(generateContent|streamGenerateContent)(\?alt=sse)?$/.exec(req.url ?? "");
    if (req.method !== "POST" || !m) return send(404, errorBody(404, "Not found"));
    if (req.headers["x-goog-api-key"] !== FAKE_GEMINI_KEY) return send(400, INVALID_KEY);
    if (!Array.isArray(body?.contents) || !body.contents.length) return send(400, errorBody(400, "contents is not specified"));
    const invalid = contentsError(body.contents, SIGNATURE) ?? schemaError(body) ?? thinkingError(m[1]!, body);
    if (invalid) return send(400, errorBody(400, invalid));
    const stream = m[2] === "streamGenerateContent";
    if (stream && !m[3]) return send(400, errorBody(400, "this fake only streams with alt=sse"));

    // Grounding with Google Search next to function declarations: Gemini 2.x refuses the pair.
    const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
    const search = tools.some((t) => t?.googleSearch);
    if (search && tools.some((t) => t?.functionDeclarations)) return send(400, errorBody(400, "Tool use with function calling is unsupported by the model."));

    const lastTurn = body.contents[body.contents.length - 1];
    const answered = lastTurn.parts.some((p: any) => p.functionResponse);
    // mode ANY with allowedFunctionNames: only those may be called (how a named tool_choice arrives).
    const allowed: string[] | undefined = body.toolConfig?.functionCallingConfig?.allowedFunctionNames;
    const decls = (tools.find((t) => t?.functionDeclarations)?.functionDeclarations ?? []).filter((d: any) => !allowed || allowed.includes(d.name));
    const mode = body.toolConfig?.functionCallingConfig?.mode;
    const callTools = decls.length && mode !== "NONE" && !answered;
    const thoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
    const prompt = JSON.stringify(body.contents).length >> 2;
    const responseId = alnum(23); // fresh per answer, as Gemini gives
    const modelVersion = fake.answersAs?.(m[1]!) ?? m[1];

    const offered = decls.map((d: any) => ({ name: d.name, schema: d.parametersJsonSchema ?? d.parameters ?? {} }));
    const scripted = fake.script?.({ tools: offered, text: conversationText(body.contents), answered });
    // Each element is the parts of one stream chunk.
    const pieces: any[][] = [];
    if (thoughts) pieces.push([{ text: "Thinking it over.", thought: true }]);
    if (scripted && "call" in scripted) {
      pieces.push([{ functionCall: { name: scripted.call.name, args: scripted.call.input }, thoughtSignature: SIGNATURE }]);
    } else if (scripted) {
      for (const w of words(scripted.text)) pieces.push([{ text: w }]);
    } else if (callTools) {
      // Like Gemini 3: the first call of a turn carries a thought signature that must come back with it.
      pieces.push(decls.slice(0, 2).map((d: any, i: number) => ({ functionCall: { name: d.name, args: { city: i === 0 ? "Paris" : "Tokyo", unit: "celsius" } }, ...(i === 0 ? { thoughtSignature: SIGNATURE } : {}) })));
    } else {
      for (const w of words(structuredAnswer(body) ?? (answered ? "The weather is sunny." : search ? GROUNDED : TEXT))) pieces.push([{ text: w }]);
    }
    const max = body.generationConfig?.maxOutputTokens;
    const calling = scripted ? "call" in scripted : callTools;
    const cut = typeof max === "number" && !calling && pieces.length > max ? pieces.slice(0, max) : pieces;
    const finishReason = cut.length < pieces.length ? "MAX_TOKENS" : "STOP";
    const thoughtsTokens = thoughts ? 4 : 0;
    const usageAt = (n: number) => ({ promptTokenCount: prompt, candidatesTokenCount: n, totalTokenCount: prompt + n + thoughtsTokens, ...(thoughts ? { thoughtsTokenCount: thoughtsTokens } : {}), promptTokensDetails: [{ modality: "TEXT", tokenCount: prompt }] });

    if (!stream) {
      return send(200, {
        candidates: [{ content: { role: "model", parts: cut.flat() }, finishReason, index: 0, ...(search ? { groundingMetadata: GROUNDING } : {}) }],
        usageMetadata: usageAt(cut.length * 2),
        modelVersion,
        responseId,
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "x-goog-fake": "1" });
    if (failure?.kind === "prompt-blocked") {
      res.end(`data: ${JSON.stringify({ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: prompt, totalTokenCount: prompt }, modelVersion, responseId })}\r\n\r\n`);
      return;
    }
    if (failure?.kind === "in-band") {
      res.end(`data: ${JSON.stringify({ error: { code: failure.code, message: failure.message, status: failure.rpcStatus } })}\r\n\r\n`);
      return;
    }
    for (let i = 0; i < cut.length; i++) {
      if (failure?.kind === "die-mid-stream" && i === failure.afterChunks) { req.socket.destroy(); return; }
      const last = i === cut.length - 1;
      const chunk = { candidates: [{ content: { role: "model", parts: cut[i] }, ...(last ? { finishReason, ...(search ? { groundingMetadata: GROUNDING } : {}) } : {}), index: 0 }], usageMetadata: usageAt((i + 1) * 2), modelVersion, responseId };
      res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
      if (fake.chunkDelayMs) await new Promise((r) => setTimeout(r, fake.chunkDelayMs));
    }
    res.end();
  }

  const server = await listenLoopback((req, res) => void handle(req, res));
  fake.baseUrl = server.origin;
  return fake;
}
