// Responses client -> OpenAI chat upstream (openai, openai-compatible, sim). Usage is reported by the driver.
// responsesToChatFor(flavor) is the same translation for a chat body that goes on to another upstream protocol
// (responses-to-messages, responses-to-gemini): the flavor decides which reasoning blobs replay and how files go.
import type { Translator } from "../../../core/contracts/translator.ts";
import { responsesToChatRequest, type ChatFlavor } from "./request.ts";
import { chatToResponse, echoOf, type AnswerContext, type ResponseEcho } from "./response.ts";
import { chatToResponsesStream } from "./stream.ts";
import { showsEncrypted } from "./reasoning.ts";

interface State { echo: ResponseEcho; ctx: AnswerContext }

export function responsesToChatFor(flavor: ChatFlavor): Translator<State> {
  return {
    native: false,
    request(body, target, opts) {
      const t = responsesToChatRequest(body, { flavor, provider: flavor === "gemini" ? target.provider : opts.provider });
      const ctx: AnswerContext = { flavor, provider: opts.provider, show: showsEncrypted(body), names: t.names, answerBytes: opts.answerBytes };
      return { op: "chat", body: t.body, dropped: t.dropped, state: { echo: echoOf(body), ctx } };
    },
    response: (json, s) => chatToResponse(json, s.echo, s.ctx),
    stream: (events, s) => chatToResponsesStream(events, s.echo, s.ctx),
    error: (err) => err,
  };
}

export const responsesToChat = responsesToChatFor("chat");
