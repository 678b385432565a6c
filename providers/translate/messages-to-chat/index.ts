// Messages client -> OpenAI chat upstream (openai, openai-compatible, sim). Usage is reported by the driver.
// messagesToChatFor(flavor) is the same translation for a chat body that goes on to another upstream protocol
// (messages-to-gemini, messages-to-converse): the flavor decides how thinking is asked for and which blobs replay.
import { Unsupported, type Translator } from "../../../core/contracts/translator.ts";
import { invalidRequest } from "../../../core/errors.ts";
import { countMarkers } from "../../../core/prompt-cache/markers.ts";
import { messagesToChatRequest } from "./request.ts";
import { chatToMessagesResponse } from "./response.ts";
import { chatToMessagesStream } from "./stream.ts";
import type { MessagesFlavor, ThinkingScope } from "./reasoning.ts";

interface State { provider: string; model?: string; scope: ThinkingScope }

export function messagesToChatFor(flavor: MessagesFlavor): Translator<State> {
  return {
    native: false,
    request(body, target, opts) {
      // max_tokens 0 is Anthropic's cache pre-warm (write the prompt cache, generate nothing): only a native Messages
      // upstream can do it; elsewhere it would become "no limit". Another target of the model may still serve it.
      if (body.max_tokens === 0) throw new Unsupported(invalidRequest("max_tokens: 0 (cache pre-warm) is served only by Anthropic-protocol upstreams (Anthropic, Claude on Vertex, Bedrock InvokeModel)", "max_tokens"));
      const scope: ThinkingScope = { flavor, provider: opts.provider };
      const t = messagesToChatRequest(body, { target, scope });
      // The client's cache_control markers do not survive into chat: on Converse, which caches, that is named (with
      // caching auto the Converse half places its own points, the client's among what auto counted).
      if (flavor === "converse" && !opts.cacheAuto && countMarkers(body) > 0) t.dropped.push("cache_control");
      return { op: "chat", body: t.body, dropped: t.dropped, state: { provider: opts.provider, model: body.model, scope } };
    },
    response: (json, s) => chatToMessagesResponse(json, s.scope),
    stream: (events, s, call) => chatToMessagesStream(events, { ...s, inputEstimate: call.inputEstimate }),
    error: (err) => err,
  };
}

export const messagesToChat = messagesToChatFor("chat");
