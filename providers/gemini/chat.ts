// The gemini driver's chat op: chat completions in, chat completions out, Gemini on the wire.
import { parseSse } from "../../core/sse/parse.ts";
import type { SseEvent } from "../../core/sse/parse.ts";
import { DROPPED_PARAMS_HEADER, type CallOptions, type ProviderResult, type Target } from "../../core/contracts/provider.ts";
import { transportError } from "../http.ts";
import { chatToGeminiRequest } from "../translate/chat-to-gemini/request.ts";
import { fromGeminiUsage, geminiToChatResponse } from "../translate/chat-to-gemini/response.ts";
import { GeminiToChatStream } from "../translate/chat-to-gemini/stream.ts";
import { geminiRequest } from "./request.ts";
import { geminiFailure } from "./errors.ts";
import type { GeminiEnv } from "./env.ts";

export async function geminiChat(env: GeminiEnv, body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
  const { body: g, dropped } = chatToGeminiRequest(body, target);
  const headers = dropped.length ? { [DROPPED_PARAMS_HEADER]: dropped.join(",") } : undefined;
  const stream = body.stream === true;
  const req = stream
    ? geminiRequest(env.config, target, "streamGenerateContent", g, "?alt=sse")
    : geminiRequest(env.config, target, "generateContent", g);
  const res = await env.client.send(req, call.signal, target.timeoutMs);
  if (res.status < 200 || res.status >= 300) throw await geminiFailure(env.name, res);
  if (stream) {
    const t = new GeminiToChatStream({ includeUsage: body.stream_options?.include_usage === true, provider: env.name, model: target.upstreamModel, created: Math.floor(Date.now() / 1000) });
    return { kind: "stream", headers, events: relay(parseSse(res.body), t, call, env.name) };
  }
  let json: any;
  try {
    json = await res.body.json();
  } catch (err) {
    throw transportError(env.name, err, call.signal);
  }
  call.reportFirstToken();
  call.reportUsage(fromGeminiUsage(json?.usageMetadata));
  return { kind: "json", headers, body: geminiToChatResponse(json, target.upstreamModel) };
}

async function* relay(events: AsyncIterable<SseEvent>, t: GeminiToChatStream, call: CallOptions, provider: string): AsyncGenerator<SseEvent> {
  let first = true;
  let reported = false;
  try {
    for await (const ev of events) {
      if (first) {
        call.reportFirstToken();
        first = false;
      }
      const out = t.push(ev);
      // Prompt tokens are known from the first chunk: report them at once in case the stream dies later.
      if (!reported && t.usageMetadata) {
        call.reportUsage(fromGeminiUsage(t.usageMetadata));
        reported = true;
      }
      for (let i = 0; i < out.length; i++) yield out[i]!;
    }
    call.reportUsage(fromGeminiUsage(t.usageMetadata));
    yield* t.end();
  } catch (err) {
    throw transportError(provider, err, call.signal);
  }
}
