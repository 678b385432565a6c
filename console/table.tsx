// A table whose columns sort on a click (again: the other way), with an optional CSV export of what it shows.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { download, toCsv } from "./csv.ts";

export interface Column<R> {
  key: string;
  label: string;
  /** Right-aligned (numbers, money). */
  num?: boolean;
  render?: (r: R) => ComponentChildren;
  /** What sorting compares (default: the row's `key` field). */
  sort?: (r: R) => string | number | null;
  /**
   * The CSV cell (default: the sort value, so a column that sorts by a number read from the API's string, money above
   * all, gives that string here); false: not exported (buttons, bars).
   */
  csv?: ((r: R) => string | number | null) | false;
}

export interface TableProps<R> {
  columns: Column<R>[];
  rows: R[];
  rowKey: (r: R) => string;
  initialSort?: { key: string; desc: boolean };
  /** File name of the CSV export; no export button without it. */
  csvName?: string;
  onRowClick?: (r: R) => void;
  selected?: string;
  empty?: string;
  foot?: ComponentChildren;
  testId?: string;
}

const valueOf = <R,>(c: Column<R>, r: R): string | number | null => (c.sort ? c.sort(r) : ((r as Record<string, unknown>)[c.key] as string | number | null) ?? null);

function compare(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

export function Table<R>(p: TableProps<R>) {
  const [sort, setSort] = useState(p.initialSort);
  const col = sort && p.columns.find((c) => c.key === sort.key);
  const rows = col ? [...p.rows].sort((a, b) => (sort!.desc ? -1 : 1) * compare(valueOf(col, a), valueOf(col, b))) : p.rows;
  const exportCsv = () => {
    const exported = p.columns.filter((c) => c.csv !== false);
    const cells = rows.map((r) => exported.map((c) => (c.csv ? c.csv(r) : valueOf(c, r))));
    download(p.csvName!, toCsv(exported.map((c) => c.label), cells));
  };
  return (
    <div class="table-wrap" data-testid={p.testId}>
      {p.csvName ? <div class="table-tools"><button type="button" class="small" onClick={exportCsv} data-testid="csv">Export CSV</button></div> : null}
      <table>
        <thead>
          <tr>
            {p.columns.map((c) => (
              <th
                key={c.key}
                class={c.num ? "num" : undefined}
                aria-sort={sort?.key === c.key ? (sort.desc ? "descending" : "ascending") : undefined}
                data-col={c.key}
                onClick={() => setSort({ key: c.key, desc: sort?.key === c.key ? !sort.desc : c.num === true })}
              >
                {c.label}
                {sort?.key === c.key ? (sort.desc ? " ▾" : " ▴") : ""}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr><td colSpan={p.columns.length} class="empty">{p.empty ?? "Nothing to show"}</td></tr>
          ) : rows.map((r) => {
            const k = p.rowKey(r);
            return (
              <tr key={k} data-row={k} class={[p.onRowClick ? "clickable" : "", p.selected === k ? "selected" : ""].join(" ").trim() || undefined} onClick={p.onRowClick ? () => p.onRowClick!(r) : undefined}>
                {p.columns.map((c) => <td key={c.key} class={c.num ? "num" : undefined} data-col={c.key}>{c.render ? c.render(r) : String(valueOf(c, r) ?? "—")}</td>)}
              </tr>
            );
          })}
        </tbody>
        {p.foot ? <tfoot>{p.foot}</tfoot> : null}
      </table>
    </div>
  );
}
