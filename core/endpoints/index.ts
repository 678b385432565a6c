// Every public endpoint the gateway serves. Add new endpoints here.
import type { EndpointSpec } from "./spec.ts";
import type { ClientProtocol, EndpointKind } from "../pipeline/context.ts";
import { chatEndpoint } from "./chat.ts";
import { embeddingsEndpoint } from "./embeddings.ts";
import { rerankEndpoint } from "./rerank.ts";
import { imagesEndpoint } from "./images.ts";
import { videosEndpoint } from "./videos.ts";
import { messagesEndpoint } from "./messages.ts";
import { countTokensEndpoint } from "./count-tokens.ts";
import { responsesEndpoint } from "./responses.ts";
import { responsesStateEndpoints } from "./responses-state.ts";
import { responsesInputTokensEndpoint } from "./responses-input-tokens.ts";
import { modelsEndpoints } from "./models.ts";
import { geminiEndpoints } from "./gemini/index.ts";
import { mcpEndpoints } from "./mcp.ts";

export const endpoints: EndpointSpec[] = [chatEndpoint, messagesEndpoint, responsesEndpoint, responsesInputTokensEndpoint, ...responsesStateEndpoints, countTokensEndpoint, embeddingsEndpoint, rerankEndpoint, imagesEndpoint, videosEndpoint, ...modelsEndpoints, ...geminiEndpoints, ...mcpEndpoints];

/**
 * The spec that validates and answers a request of this kind in this client protocol (count_tokens, embeddings and
 * models exist in the Gemini protocol too). Specs sharing both (the catalog's routes, generateContent and its stream)
 * share their validator, prepare step and terminal, so the first one stands for all.
 */
const byKind = new Map<string, EndpointSpec>();
for (const e of endpoints) if (!byKind.has(`${e.kind}:${e.protocol}`)) byKind.set(`${e.kind}:${e.protocol}`, e);

export function endpointFor(kind: EndpointKind, protocol: ClientProtocol): EndpointSpec | undefined {
  return byKind.get(`${kind}:${protocol}`);
}
