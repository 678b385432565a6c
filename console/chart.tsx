// Time-series charts (uPlot): lines, or bars/areas stacked by series. The chart is made once per set of series and
// fed new data in place as polls answer, so a live chart costs a redraw, not a rebuild.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { tickLabels, yRange } from "./chart-scale.ts";
import { lonePoints } from "./lone-points.ts";
import { utcDay, whenUtc } from "./dates.ts";

export const PALETTE = ["#2f6fde", "#e3872d", "#3a9c5b", "#c9463d", "#8a5cc2", "#1f9aa8", "#b5883a", "#d0609b", "#5c6b7a", "#7fa33a"];

export interface ChartSeries {
  label: string;
  color?: string;
  /** Dashed line (a secondary figure, e.g. p95 beside p50). */
  dash?: boolean;
}

export interface TimeChartProps {
  title: string;
  /** Seconds since the epoch, ascending. */
  x: number[];
  /** One array per series, aligned with x; null = no value. */
  ys: (number | null)[][];
  series: ChartSeries[];
  /** Stack the series (bars when `bars`, else filled areas). */
  stacked?: boolean;
  bars?: boolean;
  format?: (v: number) => string;
  height?: number;
  /** The x range to show (seconds), whatever the data covers: e.g. a whole hour with one point in it. */
  xRange?: [number, number];
  /**
   * The x values are the ledger's UTC days or hours: the axis and the legend show them in UTC (a UTC day drawn in
   * the browser's zone lands on the day before, west of Greenwich). Else the browser's time.
   */
  utc?: "day" | "hour";
  testId?: string;
}

/** Cumulative sums, so series i is drawn from the top of series i-1 (nulls count as 0). */
function stack(ys: (number | null)[][]): number[][] {
  const out: number[][] = [];
  ys.forEach((y, i) => out.push(y.map((v, j) => (v ?? 0) + (i ? out[i - 1]![j]! : 0))));
  return out;
}

/**
 * Drawing order: stacked series top of the stack first, so each one's bar (or area) is drawn over the taller ones
 * below it in the stack, not hidden by them.
 */
const orderOf = (p: TimeChartProps) => (p.stacked ? p.series.map((_, i) => p.series.length - 1 - i) : p.series.map((_, i) => i));

function plotted(p: TimeChartProps): uPlot.AlignedData {
  const ys = p.stacked ? stack(p.ys) : p.ys;
  return [p.x, ...orderOf(p).map((i) => ys[i]!)] as uPlot.AlignedData;
}

function options(p: TimeChartProps, width: number, original: () => (number | null)[][], xRange: () => [number, number] | undefined): uPlot.Options {
  const fmt = p.format ?? ((v: number) => String(Math.round(v * 100) / 100));
  const bars = p.bars ? uPlot.paths.bars!({ size: [0.7, 60] }) : undefined;
  const order = orderOf(p);
  const series: uPlot.Series[] = [p.utc === "day"
    ? { label: "Day (UTC)", value: (_u, v) => (v === null ? "—" : utcDay(v * 1000)) }
    : p.utc === "hour" ? { label: "Hour (UTC)", value: (_u, v) => (v === null ? "—" : whenUtc(v * 1000).slice(0, 16)) } : {}];
  for (const i of order) {
    const s = p.series[i]!;
    const color = s.color ?? PALETTE[i % PALETTE.length]!;
    series.push({
      label: s.label,
      stroke: color,
      width: p.bars ? 0 : 1.5,
      ...(s.dash ? { dash: [5, 4] } : {}),
      ...(p.bars ? { fill: color } : p.stacked ? { fill: color + "55" } : {}),
      // Every point when they are far enough apart (uPlot's `show`), else only the lone values no line can draw.
      points: bars ? { show: false } : { fill: color, filter: (u, si, show) => (show ? null : lonePoints(u.data[si]!)) },
      ...(bars ? { paths: bars } : {}),
      spanGaps: false,
      // The legend shows a series' own value, not its stacked height.
      value: (_u, _v, _si, idx) => {
        const v = idx === null ? null : original()[i]?.[idx];
        return v === null || v === undefined ? "—" : fmt(v);
      },
    });
  }
  // Stacked areas: each series filled down to the one below it in the stack (uPlot series k is original order[k-1]).
  const at = (orig: number) => order.indexOf(orig) + 1;
  const bands = p.stacked && !p.bars ? p.series.slice(1).map((_, j) => ({ series: [at(j + 1), at(j)] as [number, number] })) : undefined;
  return {
    width,
    height: p.height ?? 180,
    series,
    ...(bands ? { bands } : {}),
    ...(p.utc ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC") } : {}),
    scales: { x: { time: true, range: (_u, min, max) => xRange() ?? (min === max ? [min - 300, max + 300] : [min, max]) }, y: { range: (_u, min, max) => yRange(min, max) } },
    axes: [{}, {
      values: (_u, vals) => tickLabels(vals, fmt),
      // Wide enough for the longest label (small money figures are long).
      size: (_u, values) => 18 + 7 * Math.max(4, ...(values ?? []).map((v) => String(v ?? "").length)),
    }],
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
  };
}

export function TimeChart(p: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = useRef<(number | null)[][]>(p.ys);
  data.current = p.ys;
  const xRange = useRef(p.xRange);
  xRange.current = p.xRange;
  const shape = `${p.series.map((s) => s.label).join("\u0000")}|${p.stacked}|${p.bars}|${p.height}|${p.utc}`;

  useEffect(() => {
    const el = box.current!;
    const u = new uPlot(options(p, Math.max(el.clientWidth, 200), () => data.current, () => xRange.current), plotted(p), el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(el.clientWidth, 200), height: p.height ?? 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
    // Rebuilt only when the series change; data goes in below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(plotted(p));
  }, [p.x, p.ys, p.xRange?.[0]]);

  return (
    <figure class="chart" data-testid={p.testId}>
      <figcaption>{p.title}</figcaption>
      <div ref={box} class="chart-box" />
      {p.x.length === 0 ? <p class="chart-empty">No data yet</p> : null}
    </figure>
  );
}
