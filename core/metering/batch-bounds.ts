// The most input an embeddings batch or a rerank request can be billed, read from the parsed body (never serialised
// again). One context window does not bound these: a batch holds up to 2048 inputs, each up to the window, and a
// reranker reads the query again with every document. The budget reserves these figures
// (plugins/budget/worst-case.ts) and the meter caps an upstream's report at them (usage-ceiling.ts), so a request
// never settles above what it reserved.

/**
 * Tokens a provider may add to each input or query-document pair (a model's begin, end or separator tokens), so a
 * one-character input is not bounded at one token.
 */
export const ITEM_OVERHEAD_TOKENS = 4;

/** A token is at least one UTF-8 byte (byte-level BPE, SentencePiece's byte fallback): a text's bytes bound its tokens. */
const textBound = (s: string) => Buffer.byteLength(s, "utf8");

const embeddingSizes = new WeakMap<object, number[] | null>();

/**
 * Each embeddings input's token bound: a text's bytes, a token-id list's length, each with ITEM_OVERHEAD_TOKENS;
 * null for a shape the endpoint refuses (mixed or non-text items).
 */
function inputSizes(body: { input?: unknown }): number[] | null {
  let sizes = embeddingSizes.get(body);
  if (sizes !== undefined) return sizes;
  const input = body.input;
  if (typeof input === "string") sizes = [textBound(input) + ITEM_OVERHEAD_TOKENS];
  else if (!Array.isArray(input)) sizes = null;
  // One flat list of token ids is one input.
  else if (input.length > 0 && input.every((x) => typeof x === "number")) sizes = [input.length + ITEM_OVERHEAD_TOKENS];
  else {
    sizes = [];
    for (const item of input) {
      if (typeof item === "string") sizes.push(textBound(item) + ITEM_OVERHEAD_TOKENS);
      else if (Array.isArray(item)) sizes.push(item.length + ITEM_OVERHEAD_TOKENS);
      else {
        sizes = null;
        break;
      }
    }
  }
  embeddingSizes.set(body, sizes);
  return sizes;
}

/**
 * The most input tokens an embeddings request can be billed: per input its bound, at most the model's context
 * window (a longer input is refused or truncated upstream), summed. Undefined for a body that is not one.
 */
export function embeddingsInputBound(body: unknown, contextWindow: number | undefined): number | undefined {
  if (!body || typeof body !== "object") return undefined;
  const sizes = inputSizes(body as { input?: unknown });
  if (!sizes) return undefined;
  const window = contextWindow && contextWindow > 0 ? contextWindow : Infinity;
  let n = 0;
  for (const s of sizes) n += Math.min(s, window);
  return n;
}

interface RerankSizes { query: number; documents: number[] }
const rerankSizes = new WeakMap<object, RerankSizes | null>();

function rerankSizesOf(body: { query?: unknown; documents?: unknown }): RerankSizes | null {
  let sizes = rerankSizes.get(body);
  if (sizes !== undefined) return sizes;
  const { query, documents } = body;
  sizes = typeof query === "string" && Array.isArray(documents) && documents.every((d) => typeof d === "string")
    ? { query: textBound(query), documents: documents.map(textBound) }
    : null;
  rerankSizes.set(body, sizes);
  return sizes;
}

const rerankBody = (body: unknown) => (body && typeof body === "object" ? rerankSizesOf(body as { query?: unknown }) : null);

/**
 * The most input tokens a rerank request can be billed: the query with every document (Voyage and Jina bill the
 * query once per document), no window cap (what a provider counts of a truncated pair is its own). Undefined for a
 * body that is not one.
 */
export function rerankInputBound(body: unknown): number | undefined {
  const sizes = rerankBody(body);
  if (!sizes) return undefined;
  let n = 0;
  for (const d of sizes.documents) n += sizes.query + d + ITEM_OVERHEAD_TOKENS;
  return n;
}
