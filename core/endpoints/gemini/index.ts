// The Gemini API (`/api/v1beta/`), the fourth client protocol: generateContent and its stream for every language
// model, countTokens, embedContent / batchEmbedContents for every embedding model, and the model list. What the Gemini
// SDKs (@google/genai's httpOptions.baseUrl) and Gemini CLI (GOOGLE_GEMINI_BASE_URL) call. docs/gemini.md.
import type { EndpointSpec } from "../spec.ts";
import { geminiGenerateEndpoints } from "./generate.ts";
import { geminiCountTokensEndpoint } from "./count-tokens.ts";
import { geminiEmbedEndpoints } from "./embed.ts";
import { geminiModelsEndpoints } from "./models.ts";

export const geminiEndpoints: EndpointSpec[] = [...geminiGenerateEndpoints, geminiCountTokensEndpoint, ...geminiEmbedEndpoints, ...geminiModelsEndpoints];
