// Provider `anthropic`: the native Messages protocol. Messages clients pass through; chat clients reach it through
// the stream-transcoder plugin (chat -> messages -> chat), which sends no client headers with
// a translated body.
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { parseSse } from "../../core/sse/parse.ts";
import type { CallOptions, ProviderDriver, ProviderResult, Target } from "../../core/contracts/provider.ts";
import { UpstreamClient, failFromResponse, transportError } from "../http.ts";
import { buildMessagesRequest } from "./request.ts";
import { relayMessagesStream } from "./stream.ts";
import { acceptMessage } from "./response.ts";
import { anthropicCountTokens } from "./count-tokens.ts";

export interface AnthropicDriver extends ProviderDriver {
  client: UpstreamClient;
}

export function createAnthropicDriver(name: string, config: ProviderConfig, defaults: { timeoutMs: number }): AnthropicDriver {
  const client = new UpstreamClient(name, { connections: config.connections, timeoutMs: config.timeout_ms ?? defaults.timeoutMs });
  async function send(body: any, target: Target, call: CallOptions): Promise<ProviderResult> {
    const req = buildMessagesRequest(body, target, config, name, call);
    const res = await client.send(req, call.signal, target.timeoutMs);
    if (res.status < 200 || res.status >= 300) throw await failFromResponse(name, res);
    const requestId = res.headers["request-id"];
    const headers = typeof requestId === "string" ? { "x-mg-upstream-request-id": requestId } : undefined;
    if (body.stream === true) return { kind: "stream", headers, events: guard(relayMessagesStream(parseSse(res.body), call, name), name, call.signal) };
    let json: any;
    try {
      json = await res.body.json();
    } catch (err) {
      throw transportError(name, err, call.signal);
    }
    return { kind: "json", headers, body: acceptMessage(json, call) };
  }
  return {
    name,
    protocol: "anthropic",
    client,
    messages: (body, target, call) => send(body, target, call),
    countTokens: (body, target, call) => anthropicCountTokens(client, config, name, body, target, call),
    close: () => client.close(),
  };
}

async function* guard<T>(events: AsyncGenerator<T>, provider: string, signal: AbortSignal): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (err) {
    throw transportError(provider, err, signal);
  }
}
