// count_tokens for OpenAI-protocol models: OpenAI has no count endpoint for chat, so the gateway counts with the
// model's own BPE (gpt-tokenizer) the way the API bills a chat request: 3 tokens per message plus its role, name
// (+1) and content, 3 to prime the reply, and function definitions in the format OpenAI renders them to the model
// (the cookbook's per-function/per-property constants; both checked against the API's prompt_tokens in the tests).
// o200k_base for gpt-4o, 4.1, 4.5, 5, o-series and gpt-oss; cl100k_base for gpt-4 and gpt-3.5.
// Other models on OpenAI-protocol hosts (Llama on Groq, Mistral, DeepSeek, ...) get the same count with o200k_base
// as an estimate, labelled `x-mg-token-count: estimate:o200k_base`: modern BPE vocabularies land within roughly
// 10–20% of it on English and code, which is what a client deciding when to compact needs — better than a 4xx
// that leaves it guessing with characters/4. Images count a flat 765 tokens (a 1024×1024 high-detail image on
// gpt-4o), 85 at detail "low"; the image's real size is not decoded.
// The encoder's work is kept linear and shared (bpe-pieces.ts: long runs cut, the event loop given turns); past
// MAX_BPE_BYTES of text a request is counted with the gateway's character estimate instead, `estimate:chars`.
import type { ProviderResult, Target } from "../../core/contracts/provider.ts";
import { estimateTokens } from "../../core/metering/estimate-tokens.ts";
import { messagesToChatRequest } from "../translate/messages-to-chat/request.ts";
import { countResult } from "../count-result.ts";
import { boundedCount, countCooperatively } from "./bpe-pieces.ts";

export type EncodingName = "o200k_base" | "cl100k_base";
export type Count = (text: string) => number;

const OPENAI_MODEL = /^(ft:)?(gpt-|o\d|chatgpt-|codex-)/i;
const CL100K = /^(ft:)?(gpt-4(?![o.\d])|gpt-3\.5|gpt-35)/i;

/** The encoding of the model behind a target, and whether it is the model's own (else an estimate). */
export function encodingFor(target: Pick<Target, "modelId" | "upstreamModel">): { encoding: EncodingName; exact: boolean } {
  const slug = target.modelId.includes("/") ? target.modelId.slice(target.modelId.indexOf("/") + 1) : target.modelId;
  // The public id first: an Azure deployment name says nothing about the model behind it.
  const id = OPENAI_MODEL.test(slug) ? slug : OPENAI_MODEL.test(target.upstreamModel) ? target.upstreamModel : undefined;
  if (!id) return { encoding: "o200k_base", exact: false };
  return { encoding: CL100K.test(id) ? "cl100k_base" : "o200k_base", exact: true };
}

/**
 * Above this much text (UTF-8 bytes) in one request the encoder is not run: the count is estimateTokens' (which errs
 * high), labelled `estimate:chars`. A MiB is ~250k tokens of English, more than any OpenAI model but the 1M-context
 * ones holds; it bounds the encoder's CPU per request to about a second in the worst case (unspaced CJK with a cold
 * merge cache, ~1 µs a byte; prose costs ~0.05 µs a byte), handed out in YIELD_MS slices.
 */
export const MAX_BPE_BYTES = 1024 * 1024;

// Loaded on first use: o200k_base costs ~0.4 s and ~20 MB of heap, which a gateway that never counts should not pay.
const loaded = new Map<EncodingName, Promise<Count>>();
// Text that looks like a special token (<|endoftext|>) is ordinary text in a chat message, as the API treats it.
const PLAIN = { disallowedSpecial: new Set<string>() };

/** The encoder's own count: quadratic in a long run, so only ever given bpe-pieces' pieces. */
function encoder(name: EncodingName): Promise<Count> {
  let p = loaded.get(name);
  if (!p) {
    const mod = name === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base");
    p = mod.then((m) => (text: string) => m.countTokens(text, PLAIN));
    p.catch(() => loaded.delete(name));
    loaded.set(name, p);
  }
  return p;
}

/** A count with the encoding, linear in its input (synchronous: for small texts, benches and tests). */
export async function tokenizer(name: EncodingName): Promise<Count> {
  return boundedCount(await encoder(name));
}

const IMAGE_TOKENS = 765;
const IMAGE_TOKENS_LOW = 85;

function partsTokens(parts: any[], count: Count): number {
  let n = 0;
  for (const p of parts) {
    if (p?.type === "text" && typeof p.text === "string") n += count(p.text);
    else if (p?.type === "image_url") n += p.image_url?.detail === "low" ? IMAGE_TOKENS_LOW : IMAGE_TOKENS;
    else if (typeof p?.refusal === "string") n += count(p.refusal);
  }
  return n;
}

/** The cookbook's function-definition constants: gpt-4o-style models start each function with 7, older ones 10. */
function toolsTokens(tools: any[], count: Count, encoding: EncodingName): number {
  const funcInit = encoding === "cl100k_base" ? 10 : 7;
  let n = 0;
  for (const t of tools) {
    const f = t?.function ?? t ?? {};
    n += funcInit + count(`${f.name ?? ""}:${String(f.description ?? "").replace(/\.$/, "")}`);
    const props = f.parameters?.properties;
    if (props && typeof props === "object" && Object.keys(props).length) {
      n += 3;
      for (const [key, schema] of Object.entries<any>(props)) {
        n += 3;
        const { type, description, enum: values, ...rest } = schema ?? {};
        if (Array.isArray(values)) {
          n -= 3;
          for (const v of values) n += 3 + count(String(v));
        }
        const typeText = typeof type === "string" ? type : type === undefined ? "" : JSON.stringify(type);
        n += count(`${key}:${typeText}:${String(description ?? "").replace(/\.$/, "")}`);
        // Nested objects, arrays and constraints are rendered too; the cookbook stops at flat properties, so count
        // their JSON (an estimate).
        if (Object.keys(rest).length) n += count(JSON.stringify(rest));
      }
    }
  }
  return tools.length ? n + 12 : n;
}

/** Prompt tokens of a chat completions request, as OpenAI counts them. */
export function chatPromptTokens(body: { messages?: any[]; tools?: any[] }, count: Count, encoding: EncodingName): number {
  let n = 3; // every reply is primed with <|start|>assistant<|message|>
  for (const m of body.messages ?? []) {
    n += 3;
    for (const key of ["role", "name", "tool_call_id"]) {
      if (typeof m[key] === "string") n += count(m[key]) + (key === "name" ? 1 : 0);
    }
    if (typeof m.content === "string") n += count(m.content);
    else if (Array.isArray(m.content)) n += partsTokens(m.content, count);
    for (const tc of m.tool_calls ?? []) n += 3 + count(tc?.function?.name ?? "") + count(tc?.function?.arguments ?? "");
  }
  if (Array.isArray(body.tools) && body.tools.length) n += toolsTokens(body.tools, count, encoding);
  return n;
}

export function openaiCountTokens(body: any, target: Target, provider: string, signal?: AbortSignal): Promise<ProviderResult> {
  return openaiCountChatTokens(messagesToChatRequest(body).body as { messages: any[]; tools?: any[] }, target, provider, signal);
}

/** A chat completions body's prompt tokens (a translated Responses count: what its create sends). */
export async function openaiCountChatTokens(chat: { messages?: any[]; tools?: any[] }, target: Target, provider: string, signal?: AbortSignal): Promise<ProviderResult> {
  const { encoding, exact } = encodingFor(target);
  // The fixed per-message and per-function tokens first, the texts gathered to be counted together after.
  const texts: string[] = [];
  let bytes = 0;
  const fixed = chatPromptTokens(chat, (text) => {
    texts.push(text);
    bytes += Buffer.byteLength(text);
    return 0;
  }, encoding);
  if (bytes > MAX_BPE_BYTES) return countResult(provider, fixed + await countCooperatively(texts, estimateTokens, signal), "estimate:chars");
  const count = await encoder(encoding);
  return countResult(provider, fixed + await countCooperatively(texts, count, signal), `${exact ? "tokenizer" : "estimate"}:${encoding}`);
}
