// The buckets of a usage answer's range, so hours or days without traffic are drawn as zero, not left out. Day
// buckets start at midnight UTC (the ledger's daily rollups); hour buckets at the (whole-hour) start of the range.

export const stepOf = (bucket: "hour" | "day"): number => (bucket === "hour" ? 3_600_000 : 86_400_000);

export function bucketStarts(since: string, until: string, bucket: "hour" | "day"): number[] {
  const step = stepOf(bucket);
  const out: number[] = [];
  for (let t = Math.floor(Date.parse(since) / step) * step; t < Date.parse(until); t += step) out.push(t);
  return out;
}
