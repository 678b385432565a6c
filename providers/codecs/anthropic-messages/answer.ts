// A Messages answer, wherever it was sent (Anthropic's API, or Claude on Vertex's rawPredict / streamRawPredict):
// errors mapped, the stream relayed with usage and in-band errors read, JSON usage reported.
import { sseReads } from "../../sse-reads.ts";
import type { CallOptions, ProviderResult } from "../../../core/contracts/provider.ts";
import { failFromResponse, readUpstreamJson, transportError, type UpstreamResponse } from "../../http.ts";
import { relayMessagesStream } from "./stream.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../../upstream-request-id.ts";
import { acceptMessage } from "./response.ts";

export async function messagesAnswer(
  provider: string, res: UpstreamResponse, stream: boolean, call: CallOptions,
  fail: (provider: string, res: UpstreamResponse) => Promise<Error> = failFromResponse,
): Promise<ProviderResult> {
  if (res.status < 200 || res.status >= 300) throw await fail(provider, res);
  const headers = withUpstreamRequestId(undefined, upstreamRequestId(res.headers));
  if (stream) return { kind: "stream", headers, events: guard(relayMessagesStream(sseReads(res.body), call, provider, res.body), provider, call.signal) };
  const json = await readUpstreamJson(provider, res, call.signal);
  return { kind: "json", headers, body: acceptMessage(provider, json, call) };
}

async function* guard<T>(events: AsyncIterable<T>, provider: string, signal: AbortSignal): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (err) {
    throw transportError(provider, err, signal);
  }
}
