// The y axis of a time chart: its range and its tick labels. Kept apart from uPlot so it can be tested in Node.

/**
 * From 0 (or the lowest value, if negative) to 10 % above the highest. A chart with no value above 0 (no errors in
 * the hour, no traffic yet) spans 0 to 1 of its unit, not 0 to a billionth, where every tick read "0.0%".
 */
export function yRange(min: number | null, max: number | null): [number, number] {
  return [Math.min(0, min ?? 0), max !== null && max > 0 ? max * 1.1 : 1];
}

/** Tick labels, a label that repeats the one below it left blank: ticks closer than the format shows read once. */
export function tickLabels(vals: (number | null)[], fmt: (v: number) => string): string[] {
  let below: string | undefined;
  return vals.map((v) => {
    if (v === null) return "";
    const label = fmt(v);
    if (label === below) return "";
    below = label;
    return label;
  });
}
