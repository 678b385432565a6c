// What the real Gemini API checks in `contents`, for the fake Gemini upstream: a model turn with function calls is
// answered by the next (user) turn with one functionResponse per call, in the calls' order; a functionResponse turn
// comes right after a function-call turn; and the first call of a turn carries the thought signature the model gave
// it (Gemini 3 thinks always and rejects a replayed call without it), or Google's documented placeholder for a call
// the model did not make (`skip_thought_signature_validator`); a fileData URI is one Gemini fetches itself (a Files
// API file, a YouTube video: reference §4.3), never another URL. Messages are the real API's where known.
import { sampleFor } from "./schema-sample.ts";

const calls = (turn: any): any[] => (turn?.parts ?? []).filter((p: any) => p.functionCall);
const responses = (turn: any): any[] => (turn?.parts ?? []).filter((p: any) => p.functionResponse);

const GEMINI_URI = /^(https:\/\/generativelanguage\.googleapis\.com\/v1beta\/files\/|https:\/\/(www\.)?(youtube\.com|youtu\.be)\/)/;

export function contentsError(contents: any[], signature: string): string | undefined {
  for (let i = 0; i < contents.length; i++) {
    const turn = contents[i];
    for (const [j, p] of (turn?.parts ?? []).entries()) {
      const uri = p?.fileData?.fileUri;
      if (uri !== undefined && !GEMINI_URI.test(String(uri))) return `* GenerateContentRequest.contents[${i}].parts[${j}].file_data.file_uri: Invalid or unsupported file uri: ${String(uri)}`;
    }
    const fc = calls(turn);
    if (turn.role === "model" && fc.length) {
      if (fc[0].thoughtSignature !== signature && fc[0].thoughtSignature !== "skip_thought_signature_validator") return "Function call is missing a thought_signature in functionCall parts.";
      const next = contents[i + 1];
      if (!next) continue;
      const fr = responses(next);
      if (next.role !== "user" || !fr.length) return "Please ensure that function response turn comes immediately after a function call turn.";
      if (fr.length !== fc.length) return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
      const names = fc.map((p) => p.functionCall.name).join(",");
      if (fr.map((p) => p.functionResponse.name).join(",") !== names) return `Function responses must answer the function calls of the previous turn in order (${names}).`;
    }
    if (responses(turn).length && !(contents[i - 1]?.role === "model" && calls(contents[i - 1]).length)) {
      return "Please ensure that function response turn comes immediately after a function call turn.";
    }
  }
  return undefined;
}

/** responseMimeType application/json: a JSON answer matching responseSchema (some object without one). */
export function structuredAnswer(body: any): string | undefined {
  const gc = body?.generationConfig;
  if (gc?.responseMimeType !== "application/json") return undefined;
  return JSON.stringify(sampleFor(gc.responseSchema ?? { type: "object", properties: { answer: { type: "string" } } }));
}

/** Gemini 2.5 Pro thinks always: a thinking budget of 0 is the real API's 400 (its budgets run 128 to 32768). */
export function thinkingError(model: string, body: any): string | undefined {
  const budget = body?.generationConfig?.thinkingConfig?.thinkingBudget;
  if (/^gemini-2\.5-pro/.test(model) && budget === 0) return "Budget 0 is invalid. This model only works in thinking mode.";
  return undefined;
}
