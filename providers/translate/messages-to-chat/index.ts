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
import { OPENAI_TOOL_NAMES, clientToolNames, clientToolNamesStream, upstreamToolNames, type ToolNameMap } from "../tool-names.ts";

/** names: tool names a chat upstream refuses (a Messages name past 64 characters), sent changed (tool-names.ts). */
interface State { provider: string; model?: string; scope: ThinkingScope; names?: ToolNameMap }

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
      // A chat body that goes on to another upstream protocol is named for it by that half of the chain.
      const named = flavor === "chat" ? upstreamToolNames(t.body, OPENAI_TOOL_NAMES) : { body: t.body };
      return { op: "chat", body: named.body, dropped: t.dropped, state: { provider: opts.provider, model: body.model, scope, names: named.names } };
    },
    response: (json, s) => chatToMessagesResponse(clientToolNames(json, s.names), s.scope),
    stream: (events, s, call) => chatToMessagesStream(clientToolNamesStream(events, s.names), { ...s, inputEstimate: call.inputEstimate }),
    error: (err) => err,
  };
}

export const messagesToChat = messagesToChatFor("chat");
