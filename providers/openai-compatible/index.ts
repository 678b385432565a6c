// Provider `openai`: any OpenAI-protocol upstream (OpenAI, Azure OpenAI, Groq, Mistral, Together, DeepSeek, xAI,
// Fireworks, OpenRouter, vLLM, Ollama).
import type { ProviderConfig } from "../../core/generated/types/gateway.ts";
import { DROPPED_PARAMS_HEADER, type CallOptions, type ProviderDriver, type ProviderResult, type Target } from "../../core/contracts/provider.ts";
import type { DriverSettings } from "../../core/contracts/builtins.ts";
import { UpstreamClient, failFromResponse, readUpstreamJson } from "../http.ts";
import { checkChatAnswer } from "../answer-shape.ts";
import { baseUrlOf, buildChatRequest } from "./request.ts";
import { relayChatBody } from "./stream.ts";
import { fromOpenAIUsage } from "./usage.ts";
import { openaiEmbeddings } from "./embeddings.ts";
import { openaiImages } from "./images.ts";
import { openaiVideos } from "./videos.ts";
import { openaiCountChatTokens, openaiCountTokens } from "./count-tokens.ts";
import { deleteOpenAIResponse, openaiResponses } from "./responses.ts";
import { openaiCountResponsesTokens } from "./responses-input-tokens.ts";
import { openaiModerations } from "./moderations.ts";
import { genAiProviderOf, mayObjectArguments } from "./host-conventions.ts";
import { stringifyToolArguments } from "./tool-arguments.ts";
import { upstreamRequestId, withUpstreamRequestId } from "../upstream-request-id.ts";

export function createOpenAIDriver(name: string, config: ProviderConfig, defaults: DriverSettings): ProviderDriver & { client: UpstreamClient } {
  const client = new UpstreamClient(name, {
    connections: config.connections,
    timeoutMs: config.timeout_ms ?? defaults.timeoutMs,
    answerTimeoutMs: defaults.answerTimeoutMs, limits: defaults.limits, egress: defaults.egress,
    origins: [config.base_url ?? "https://api.openai.com/v1"],
  });
  return {
    name,
    protocol: "openai",
    // Traces name the host (Groq, Mistral, Azure OpenAI, ...), not the wire protocol they share.
    genAiProvider: genAiProviderOf(config, config.base_url ?? "https://api.openai.com/v1"),
    client,
    async chat(body, target, call): Promise<ProviderResult> {
      const req = buildChatRequest(body, target, config, name);
      const res = await client.send(req, call.signal, target.timeoutMs);
      if (res.status < 200 || res.status >= 300) throw await failFromResponse(name, res);
      const dropped = req.dropped.length ? { [DROPPED_PARAMS_HEADER]: req.dropped.join(",") } : undefined;
      const headers = withUpstreamRequestId(dropped, upstreamRequestId(res.headers));
      if (body.stream === true) {
        const scan = mayObjectArguments(config, baseUrlOf(config, target));
        return { kind: "stream", headers, events: relayChatBody(res.body, body.stream_options?.include_usage === true, call, name, call.signal, scan) };
      }
      const json = checkChatAnswer(name, await readUpstreamJson(name, res, call.signal));
      if (json.usage) call.reportUsage(fromOpenAIUsage(json.usage));
      stringifyToolArguments(json, "message");
      return { kind: "json", headers, body: json };
    },
    // Not on Azure: its /responses is not under the deployment path (see responses.ts).
    ...(config.flavor === "azure" ? {} : {
      responses: (body: any, target: Target, call: CallOptions) => openaiResponses(client, config, name, body, target, call),
      deleteResponse: (id: string, target: Target, signal: AbortSignal) => deleteOpenAIResponse(client, config, name, id, target, signal),
      countResponsesTokens: (body: any, target: Target, call: CallOptions) => openaiCountResponsesTokens(client, config, name, body, target, call),
    }),
    // Azure has no /moderations (its content filters are a service of their own).
    ...(config.flavor === "azure" ? {} : { moderations: (body: any, target: Target, call: CallOptions) => openaiModerations(client, config, name, body, target, call) }),
    countTokens: (body, target, call) => openaiCountTokens(body, target, name, call.signal),
    countChatTokens: (body, target, call) => openaiCountChatTokens(body, target, name, call.signal),
    embeddings: (body, target, call) => openaiEmbeddings(client, config, name, body, target, call),
    images: (body, target, call) => openaiImages(client, config, name, body, target, call),
    videos: (body, target, call) => openaiVideos(client, config, name, body, target, call),
    close: () => client.close(),
  };
}
