// Messages client -> OpenAI chat upstream (openai, openai-compatible, sim). Usage is reported by the driver.
import type { Translator } from "../../../core/contracts/translator.ts";
import { messagesToChatRequest } from "./request.ts";
import { chatToMessagesResponse } from "./response.ts";
import { chatToMessagesStream } from "./stream.ts";

interface State { provider: string; model?: string }

export const messagesToChat: Translator<State> = {
  native: false,
  request(body, _target, opts) {
    const t = messagesToChatRequest(body);
    return { op: "chat", body: t.body, dropped: t.dropped, state: { provider: opts.provider, model: body.model } };
  },
  response: (json) => chatToMessagesResponse(json),
  stream: (events, s) => chatToMessagesStream(events, s),
  error: (err) => err,
};
