// A chart line joins neighbouring values: a value with no value beside it (idle, null steps either side, or the only
// one) draws no line at all. Such values are drawn as points instead, so a lone 10 s step of errors is not invisible.

/** Indexes of the values whose neighbours are both missing (null, undefined, or past an end). */
export function lonePoints(ys: ArrayLike<number | null | undefined>): number[] {
  const has = (i: number) => i >= 0 && i < ys.length && ys[i] !== null && ys[i] !== undefined;
  const out: number[] = [];
  for (let i = 0; i < ys.length; i++) if (has(i) && !has(i - 1) && !has(i + 1)) out.push(i);
  return out;
}
