// Responses client -> OpenAI chat upstream (openai, openai-compatible, sim). Usage is reported by the driver.
import type { Translator } from "../../../core/contracts/translator.ts";
import { responsesToChatRequest } from "./request.ts";
import { chatToResponse, echoOf, type ResponseEcho } from "./response.ts";
import { chatToResponsesStream } from "./stream.ts";

interface State { provider: string; echo: ResponseEcho }

export const responsesToChat: Translator<State> = {
  native: false,
  request(body, _target, opts) {
    const t = responsesToChatRequest(body);
    return { op: "chat", body: t.body, dropped: t.dropped, state: { provider: opts.provider, echo: echoOf(body) } };
  },
  response: (json, s) => chatToResponse(json, s.echo),
  stream: (events, s) => chatToResponsesStream(events, s.echo, s.provider),
  error: (err) => err,
};
