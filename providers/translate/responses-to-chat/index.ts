// Responses client -> OpenAI chat upstream (openai, openai-compatible, sim). Usage is reported by the driver.
// responsesToChatFor(flavor) is the same translation for a chat body that goes on to another upstream protocol
// (responses-to-messages, responses-to-gemini): the flavor decides which reasoning blobs replay and how files go.
import type { Translator } from "../../../core/contracts/translator.ts";
import { responsesToChatRequest, type ChatFlavor } from "./request.ts";
import { chatToResponse, echoOf, type AnswerContext, type ResponseEcho } from "./response.ts";
import { chatToResponsesStream } from "./stream.ts";
import { showsEncrypted } from "./reasoning.ts";
import { gatewayDownloadsClaudeUrls } from "../claude-url-sources.ts";
import { OPENAI_TOOL_NAMES, clientToolNames, clientToolNamesStream, upstreamToolNames, type ToolNameMap } from "../tool-names.ts";

/** names: tool names a chat upstream refuses, sent changed (tool-names.ts). */
interface State { echo: ResponseEcho; ctx: AnswerContext; names?: ToolNameMap }

/**
 * urlFiles: the chat body goes on to a half that downloads URL parts (Converse), so file_url goes on as one. Claude
 * on Bedrock InvokeModel or Vertex has its URLs downloaded too (claude-url-sources.ts), whatever their names.
 */
export function responsesToChatFor(flavor: ChatFlavor, urlFiles = false): Translator<State> {
  return {
    native: false,
    request(body, target, opts) {
      const downloads = urlFiles || (flavor === "messages" && gatewayDownloadsClaudeUrls(opts.driverProtocol));
      const t = responsesToChatRequest(body, { flavor, urlFiles: downloads, provider: flavor === "gemini" ? target.provider : opts.provider, target });
      const ctx: AnswerContext = { flavor, provider: opts.provider, show: showsEncrypted(body), names: t.names, answerBytes: opts.answerBytes };
      // A chat body that goes on to another upstream protocol is named for it by that half of the chain.
      const named = flavor === "chat" ? upstreamToolNames(t.body, OPENAI_TOOL_NAMES) : { body: t.body };
      return { op: "chat", body: named.body, dropped: t.dropped, state: { echo: echoOf(body), ctx, names: named.names } };
    },
    response: (json, s) => chatToResponse(clientToolNames(json, s.names), s.echo, s.ctx),
    stream: (events, s) => chatToResponsesStream(clientToolNamesStream(events, s.names), s.echo, s.ctx),
    error: (err) => err,
  };
}

export const responsesToChat = responsesToChatFor("chat");
