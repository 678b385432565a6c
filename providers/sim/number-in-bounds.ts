// A number a JSON Schema's numeric keywords accept, for simulated tool arguments and structured output. Clients send
// both bounds of a side at once (Zod 4 writes minimum: -2^53+1 beside exclusiveMinimum: 0 for a positive integer),
// so each side's tighter bound is the one to meet.

interface Bound { at: number; open: boolean }

/** The tighter of a side's bounds: the larger lower one (the smaller upper one); at a tie, the exclusive one. */
function tighter(bounds: Bound[], lower: boolean): Bound | undefined {
  return bounds.reduce<Bound | undefined>((a, b) => {
    if (!a) return b;
    if (a.at === b.at) return b.open ? b : a;
    return (lower ? b.at > a.at : b.at < a.at) ? b : a;
  }, undefined);
}

/** A side's bounds: `minimum` (exclusive under draft-04's `exclusiveMinimum: true`) and a numeric `exclusiveMinimum`. */
function boundOf(s: Record<string, any>, inclusive: "minimum" | "maximum", exclusive: "exclusiveMinimum" | "exclusiveMaximum"): Bound | undefined {
  const bounds: Bound[] = [];
  if (typeof s[inclusive] === "number") bounds.push({ at: s[inclusive], open: s[exclusive] === true });
  if (typeof s[exclusive] === "number") bounds.push({ at: s[exclusive], open: true });
  return tighter(bounds, inclusive === "minimum");
}

/** 1 where the bounds allow it, else the value nearest the bound that rules it out; a multiple of `multipleOf`. */
export function numberInBounds(s: Record<string, any>, integer: boolean): number {
  const lo = boundOf(s, "minimum", "exclusiveMinimum");
  const hi = boundOf(s, "maximum", "exclusiveMaximum");
  const above = (v: number) => !lo || (lo.open ? v > lo.at : v >= lo.at);
  const below = (v: number) => !hi || (hi.open ? v < hi.at : v <= hi.at);
  const step = typeof s.multipleOf === "number" && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined;

  if (step === undefined) {
    if (lo) return lo.open ? (lo.at + Math.min(hi?.at ?? Infinity, lo.at + 1)) / 2 : lo.at;
    return below(1) ? 1 : hi!.open ? hi!.at - 1 : hi!.at;
  }
  // Values are k * step: counted up from the lower bound, or down from the upper one when only it rules 1 out.
  let k: number;
  let dir = 1;
  if (lo) {
    k = Math.ceil(lo.at / step);
    if (!above(k * step)) k++;
  } else {
    k = Math.ceil(1 / step);
    if (!below(k * step)) {
      k = Math.floor(hi!.at / step);
      if (!below(k * step)) k--;
      dir = -1;
    }
  }
  // An integer with a fractional multipleOf (0.5): the next multiple that is whole.
  for (let i = 0; integer && i < 100 && !Number.isInteger(k * step); i++) k += dir;
  return k * step;
}
