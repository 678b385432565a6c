// Every public endpoint the gateway serves. Add new endpoints here.
import type { EndpointSpec } from "./spec.ts";
import { chatEndpoint } from "./chat.ts";
import { embeddingsEndpoint } from "./embeddings.ts";
import { rerankEndpoint } from "./rerank.ts";
import { imagesEndpoint } from "./images.ts";
import { videosEndpoint } from "./videos.ts";
import { messagesEndpoint } from "./messages.ts";
import { countTokensEndpoint } from "./count-tokens.ts";
import { responsesEndpoint } from "./responses.ts";
import { responsesStateEndpoints } from "./responses-state.ts";
import { modelsEndpoints } from "./models.ts";

export const endpoints: EndpointSpec[] = [chatEndpoint, messagesEndpoint, responsesEndpoint, ...responsesStateEndpoints, countTokensEndpoint, embeddingsEndpoint, rerankEndpoint, imagesEndpoint, videosEndpoint, ...modelsEndpoints];

export const endpointByKind = new Map(endpoints.map((e) => [e.kind, e]));
