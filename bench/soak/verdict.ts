// The soak run's leak criteria.
//
// Live JS heap: a full GC at the warm-up mark (2 minutes, or 20 % of shorter runs) and again at the end, when no
// request is in flight; the growth divided by the requests served in between is what each request left behind. It
// does not depend on GC timing or on how busy the machine is, so the threshold can be tight (default 100 bytes per
// request: a leaked listener, map entry or closure per request is several hundred bytes).
//
// RSS (everything the OS charges: native memory, sockets, SQLite, Buffers too). A healthy Node process climbs for
// the first minute or two (JIT, heap growing to its working size, connection pools, SQLite's page cache) and then
// moves around a plateau with GC; under CPU contention requests pile up and the plateau steps up to a new high-water
// mark (V8 and malloc keep memory they once needed). A leak keeps climbing. Judged after warm-up, two ways:
//   slope  — Theil–Sen slope (median of all pairwise slopes, so one GC spike moves it little) of RSS over the
//            second half of the run above maxSlopeMbPerMin, AND over the last quarter above half of it: a leak climbs
//            in both, while a one-off step in the third quarter leaves the last flat;
//   growth — RSS at the end (median of the last 3 samples) above maxGrowth × RSS at the warm-up mark (median of the
//            3 samples nearest to it).
// Runs shorter than MIN_JUDGED_MINUTES are reported but not judged: their second half is still warm-up.
export const MIN_JUDGED_MINUTES = 4;

export interface Point { t: number; v: number } // t in seconds

export function theilSenSlope(points: Point[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const dt = points[j]!.t - points[i]!.t;
      if (dt > 0) slopes.push((points[j]!.v - points[i]!.v) / dt);
    }
  }
  return median(slopes);
}

export function median(xs: number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median of the (up to) 3 values nearest to time t. */
export function valueAt(points: Point[], t: number): number {
  const near = [...points].sort((a, b) => Math.abs(a.t - t) - Math.abs(b.t - t)).slice(0, 3);
  return median(near.map((p) => p.v));
}

export interface LeakVerdict {
  judged: boolean;
  /** MB per minute over the second half and over the last quarter. */
  slope: number;
  lastQuarterSlope: number;
  markS: number;
  atMark: number;
  atEnd: number;
  growth: number;
  failures: string[];
}

export function judgeRss(points: Point[], durationS: number, maxSlopeMbPerMin: number, maxGrowth: number): LeakVerdict {
  const markS = Math.min(120, 0.2 * durationS);
  const secondHalf = points.filter((p) => p.t >= durationS / 2);
  const slope = theilSenSlope(secondHalf) * 60;
  const lastQuarterSlope = theilSenSlope(points.filter((p) => p.t >= durationS * 0.75)) * 60;
  const atMark = valueAt(points, markS);
  const atEnd = median(points.slice(-3).map((p) => p.v));
  const growth = atEnd / atMark;
  const judged = durationS >= MIN_JUDGED_MINUTES * 60;
  const failures: string[] = [];
  if (judged && slope > maxSlopeMbPerMin && lastQuarterSlope > maxSlopeMbPerMin / 2) {
    failures.push(`RSS still growing: ${slope.toFixed(2)} MB/min over the second half > ${maxSlopeMbPerMin}, ${lastQuarterSlope.toFixed(2)} MB/min over the last quarter > ${maxSlopeMbPerMin / 2}`);
  }
  if (judged && growth > maxGrowth) failures.push(`RSS at the end ${atEnd.toFixed(1)} MB > ${maxGrowth} x RSS at ${markS} s (${atMark.toFixed(1)} MB)`);
  return { judged, slope, lastQuarterSlope, markS, atMark, atEnd, growth, failures };
}

export interface HeapVerdict { perRequest: number; failures: string[] }

/** Live heap (bytes, after a full GC) at the mark and at the end, and the requests sent in between. */
export function judgeHeap(atMark: number, atEnd: number, requests: number, durationS: number, maxBytesPerRequest: number): HeapVerdict {
  const perRequest = requests > 0 ? (atEnd - atMark) / requests : NaN;
  const failures: string[] = [];
  if (!Number.isFinite(perRequest)) failures.push("live heap not measured (the gateway did not answer the GC probe)");
  else if (durationS >= MIN_JUDGED_MINUTES * 60 && perRequest > maxBytesPerRequest) {
    failures.push(`live heap grew ${((atEnd - atMark) / 1048576).toFixed(1)} MB over ${requests} requests: ${perRequest.toFixed(0)} bytes per request > ${maxBytesPerRequest}`);
  }
  return { perRequest, failures };
}
