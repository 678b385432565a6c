// A model type as a message writes it, with its article: "an embedding model", "a language model". One helper, so
// that no refusal says "a image model" again (the article was picked for one type word and not the next).

/** "an image model", "a video model": the type word (language, embedding, image, video, reranking) with its article. */
export function aModelOfType(type: string): string {
  return `${/^[aeiou]/i.test(type) ? "an" : "a"} ${type} model`;
}
