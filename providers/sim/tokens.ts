// The simulator's tokenizer: a word with its leading space, or one punctuation mark, is one token.
// Close enough to BPE counts for English (~0.75 words per token) to make usage and max_tokens behave honestly.

const PIECE = /\s*[\p{L}\p{N}_']+|\s*[^\s\p{L}\p{N}_']|\s+$/gu;

export function splitTokens(text: string): string[] {
  return text.match(PIECE) ?? [];
}

export function countTokens(text: string): number {
  let n = 0;
  PIECE.lastIndex = 0;
  while (PIECE.exec(text)) n++;
  return n;
}

/** Text of any chat content (string, parts array, null). Images count a flat 85 tokens, as OpenAI's low detail. */
export function contentTokens(content: unknown): number {
  if (typeof content === "string") return countTokens(content);
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content) {
    if (part?.type === "text") n += countTokens(part.text ?? "");
    else if (part?.type === "image_url" || part?.type === "image") n += 85;
    else if (typeof part?.refusal === "string") n += countTokens(part.refusal);
  }
  return n;
}

/** Prompt tokens of a chat request: message contents, tool calls, tool definitions, plus a small framing cost. */
export function promptTokens(body: { messages?: any[]; tools?: any[]; response_format?: any }): number {
  let n = 3;
  for (const m of body.messages ?? []) {
    n += 4 + contentTokens(m.content);
    for (const tc of m.tool_calls ?? []) n += countTokens(tc.function?.name ?? "") + countTokens(tc.function?.arguments ?? "");
  }
  if (body.tools?.length) n += countTokens(JSON.stringify(body.tools));
  if (body.response_format?.json_schema) n += countTokens(JSON.stringify(body.response_format.json_schema));
  return n;
}
