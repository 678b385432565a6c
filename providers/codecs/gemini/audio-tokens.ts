// Gemini reports how many of a prompt's tokens were of each modality (usageMetadata.promptTokensDetails, and of the
// cached ones cacheTokensDetails: [{ modality: "AUDIO", tokenCount }]). Google bills audio input above text on some
// models (Gemini 2.5 Flash: $1.00 against $0.30 per million), so the audio counts are kept apart for billing.

/** The AUDIO tokenCount of a ModalityTokenCount list (0 when the list or the entry is missing or not a count). */
export function audioTokensOf(details: unknown): number {
  if (!Array.isArray(details)) return 0;
  let n = 0;
  for (const d of details) {
    const c = d?.tokenCount;
    if (d?.modality === "AUDIO" && typeof c === "number" && Number.isFinite(c) && c > 0) n += c;
  }
  return n;
}

/**
 * Of a usageMetadata's prompt, the audio tokens not read from the cache and those read from it. promptTokensDetails
 * counts the cached tokens too (promptTokenCount includes cachedContentTokenCount), so the cached audio is taken out.
 */
export function geminiAudioTokens(m: any): { input: number; cached: number } {
  const prompt = audioTokensOf(m?.promptTokensDetails), cached = audioTokensOf(m?.cacheTokensDetails);
  return { input: Math.max(0, prompt - cached), cached };
}
