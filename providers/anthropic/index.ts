// Provider `anthropic`: the native Messages protocol. Messages clients pass through; chat clients reach it through
// the stream-transcoder plugin (chat -> messages -> chat), which sends no client headers with
// a translated body.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import type { CallOptions, ProviderDriver, ProviderResult, Target } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { UpstreamClient } from "../http.ts";
import { anthropicHeaders, buildMessagesRequest } from "./request.ts";
import { headersOpenLongContext } from "../codecs/anthropic-messages/long-context-beta.ts";
import { messagesAnswer } from "../codecs/anthropic-messages/answer.ts";
import { anthropicCountTokens } from "./count-tokens.ts";

export interface AnthropicDriver extends ProviderDriver {
  client: UpstreamClient;
}

export function createAnthropicDriver(name: string, config: ProviderConfig, defaults: DriverSettings): AnthropicDriver {
  const client = new UpstreamClient(name, { connections: config.connections, timeoutMs: config.timeout_ms ?? defaults.timeoutMs, answerTimeoutMs: defaults.answerTimeoutMs, limits: defaults.limits, egress: defaults.egress });
  async function send(body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
    const req = buildMessagesRequest(body, target, config, name, call);
    return messagesAnswer(name, await client.send(req, call.signal, target.timeoutMs), body.stream === true, call);
  }
  return {
    name,
    protocol: "anthropic",
    client,
    messages: (body, target, call) => send(body, target, call),
    countTokens: (body, target, call) => anthropicCountTokens(client, config, name, body, target, call),
    // The headers it sends: the client's beta (none on a translated call), else the provider's configured one.
    opensLongContext: (target, sent) => headersOpenLongContext(anthropicHeaders(config, target, sent.clientHeaders, true)),
    close: () => client.close(),
  };
}
