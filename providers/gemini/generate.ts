// The gemini driver's native ops: a Gemini generateContent body in, Gemini's own JSON or SSE events out. Chat and
// messages clients reach them through providers/translate/ (chat-to-gemini, messages-to-gemini).
import { parseSse } from "../../core/sse/parse.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import type { CallOptions, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { readUpstreamJson, transportError, type UpstreamResponse } from "../http.ts";
import { geminiRequest } from "./request.ts";
import { geminiFailure } from "./errors.ts";
import type { GeminiEnv } from "./env.ts";

export async function geminiGenerate(env: GeminiEnv, body: any, target: Target, call: CallOptions, stream: boolean): Promise<ProviderResult> {
  const req = stream
    ? geminiRequest(env.config, target, "streamGenerateContent", body, "?alt=sse")
    : geminiRequest(env.config, target, "generateContent", body);
  return geminiAnswer(env.name, await env.client.send(req, call.signal, target.timeoutMs), call, stream);
}

/** Gemini's answer to a generate call, wherever it was sent (the Gemini API or Vertex AI): its JSON or SSE events. */
export async function geminiAnswer(provider: string, res: UpstreamResponse, call: CallOptions, stream: boolean): Promise<ProviderResult> {
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(provider, res);
  if (stream) return { kind: "stream", events: relay(parseSse(res.body), call, provider) };
  const json: unknown = await readUpstreamJson(provider, res, call.signal);
  call.reportFirstToken();
  return { kind: "json", body: json };
}

async function* relay(events: AsyncIterable<SseEvent>, call: CallOptions, provider: string): AsyncGenerator<SseEvent> {
  let first = true;
  try {
    for await (const ev of events) {
      if (first) {
        call.reportFirstToken();
        first = false;
      }
      yield ev;
    }
  } catch (err) {
    throw transportError(provider, err, call.signal);
  }
}
