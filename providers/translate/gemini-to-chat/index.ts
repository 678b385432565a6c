// Gemini client -> chat-protocol upstream (openai, openai-compatible, sim). geminiToChatFor(flavor) is the same
// translation for a chat body that goes on to another upstream protocol (gemini-to-messages, gemini-to-converse): the
// flavor decides which reasoning blobs replay and how far token budgets go. Usage is reported by the driver or the
// inner half of a chain.
import type { SseEvent } from "../../../core/sse/parse.ts";
import type { Translator } from "../../../core/contracts/translator.ts";
import { geminiToChatRequest } from "./request.ts";
import { chatToGeminiResponse, type AnswerContext } from "./response.ts";
import { ChatToGeminiStream } from "./stream.ts";
import type { GeminiFlavor } from "./reasoning.ts";
import { gatewayDownloadsClaudeUrls } from "../claude-url-sources.ts";
import { OPENAI_TOOL_NAMES, clientToolNames, clientToolNamesStream, upstreamToolNames, type ToolNameMap } from "../tool-names.ts";

/** names: tool names a chat upstream refuses (`github.search_issues`), sent changed (tool-names.ts). */
type State = AnswerContext & { names?: ToolNameMap };

export function geminiToChatFor(flavor: GeminiFlavor): Translator<State> {
  return {
    native: false,
    request(body, target, opts) {
      // Converse's half downloads URL parts, and so does the gateway for Claude on Bedrock InvokeModel or Vertex.
      const urlPdfs = flavor === "converse" || (flavor === "messages" && gatewayDownloadsClaudeUrls(opts.driverProtocol));
      const t = geminiToChatRequest(body, target, { flavor, provider: opts.provider, urlPdfs }, opts.provider);
      // A chat body that goes on to another upstream protocol is named for it by that half of the chain.
      const named = flavor === "chat" ? upstreamToolNames(t.body, OPENAI_TOOL_NAMES) : { body: t.body };
      const state: State = { flavor, provider: opts.provider, model: body.model, thoughts: body.generationConfig?.thinkingConfig?.includeThoughts === true, names: named.names };
      return { op: "chat", body: named.body, dropped: t.dropped, state };
    },
    response: (json, s) => chatToGeminiResponse(clientToolNames(json, s.names), s),
    stream: (events, s) => relay(clientToolNamesStream(events, s.names), new ChatToGeminiStream(s)),
    error: (err) => err,
  };
}

async function* relay(events: AsyncIterable<SseEvent>, t: ChatToGeminiStream): AsyncGenerator<SseEvent> {
  for await (const ev of events) {
    const out = t.push(ev);
    for (let i = 0; i < out.length; i++) yield out[i]!;
  }
  yield* t.end();
}

export const geminiToChat = geminiToChatFor("chat");
