// The listed value an image request's `size` or `quality` stands for. OpenAI SDK code sends names a model may not
// list: `auto` (gpt-image's documented default for both, which lets the provider pick a tier, dearer ones included)
// and dall-e's `hd` / `standard`. Each is sent as the model's own value, so the tier billed is the tier made:
// `auto` as the model's default (its first listed value, what a request naming none is sent), `hd` as `high` and
// `standard` as `medium` where the model lists those (gpt-image's nearest tiers). A model listing the name itself
// (an operator's dall-e entry with hd) is sent it as is.

/** Dall-e's quality names and the gpt-image tiers they are sent as. */
const QUALITY_NEAREST: Readonly<Record<string, string>> = { hd: "high", standard: "medium" };

/** The listed value `asked` is sent as, or undefined when the model serves nothing by that name. */
export function listedValue(field: "size" | "quality", asked: unknown, listed: readonly unknown[]): unknown {
  if (listed.includes(asked)) return asked;
  if (asked === "auto") return listed[0];
  const nearest = field === "quality" && typeof asked === "string" && Object.hasOwn(QUALITY_NEAREST, asked) ? QUALITY_NEAREST[asked] : undefined;
  return nearest !== undefined && listed.includes(nearest) ? nearest : undefined;
}
