// CSV export of what a table shows (RFC 4180 quoting), downloaded from a blob: nothing leaves the browser.

const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

export function toCsv(header: string[], rows: (string | number | null | undefined)[][]): string {
  const cell = (v: string | number | null | undefined) => {
    const s = v === null || v === undefined ? "" : String(v);
    // A leading =, +, -, @, tab or CR would be read as a formula by a spreadsheet: an apostrophe before it keeps it
    // text. Only a cell that is a number as a whole (a negative amount) is left as it is: "-2+3+HYPERLINK(...)" is not.
    const safe = /^[=+\-@\t\r]/.test(s) && !NUMBER.test(s) ? `'${s}` : s;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [header, ...rows].map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n";
}

export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
