// Just enough PromQL to list what an expression reads: metric names, and label names per selector and per
// aggregation clause (by / without / on / ignoring / group_left / group_right). Not a parser: a tokenizer.

export interface PromRefs {
  /** Each selector: its metric name and the label names its matchers use. */
  selectors: Array<{ metric: string; labels: string[] }>;
  /** Label names in by (...) / without (...) / on (...) / ignoring (...) / group_*(...) clauses. */
  groupingLabels: string[];
}

const KEYWORDS = new Set([
  "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values", "group",
  "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
  "inf", "nan",
]);
const GROUPING = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);

type Tok = { kind: "ident" | "string" | "num" | "punct" | "range"; text: string };

export function tokenize(expr: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === "\\" ? 2 : 1;
      out.push({ kind: "string", text: expr.slice(i + 1, j) });
      i = j + 1;
      continue;
    }
    if (c === "[") { // range or subquery selector, [5m] / [$__rate_interval] / [1h:5m]
      const j = expr.indexOf("]", i);
      out.push({ kind: "range", text: expr.slice(i, j + 1) });
      i = j + 1;
      continue;
    }
    const id = /^[a-zA-Z_:][\w:]*/.exec(expr.slice(i));
    if (id) { out.push({ kind: "ident", text: id[0] }); i += id[0].length; continue; }
    const num = /^\d+(\.\d+)?(e[+-]?\d+)?/i.exec(expr.slice(i));
    if (num) { out.push({ kind: "num", text: num[0] }); i += num[0].length; continue; }
    const op = /^(=~|!~|!=|==|>=|<=|[-+*/%^(){},=<>])/.exec(expr.slice(i));
    if (!op) throw new Error(`PromQL: unexpected ${JSON.stringify(c)} at ${i} in ${expr}`);
    out.push({ kind: "punct", text: op[0] });
    i += op[0].length;
  }
  return out;
}

/** Label names inside a { ... } (at index of "{"); returns them and the index after "}". */
function matchers(toks: Tok[], at: number): { labels: string[]; end: number; metric?: string } {
  const labels: string[] = [];
  let metric: string | undefined;
  let i = at + 1;
  while (i < toks.length && toks[i]!.text !== "}") {
    const t = toks[i]!;
    const next = toks[i + 1];
    if (t.kind === "ident" && next && ["=", "!=", "=~", "!~"].includes(next.text)) {
      if (t.text === "__name__") metric = toks[i + 2]?.text;
      else labels.push(t.text);
      i += 3;
      continue;
    }
    i++;
  }
  return { labels, end: i + 1, metric };
}

export function promRefs(expr: string): PromRefs {
  const toks = tokenize(expr);
  const selectors: PromRefs["selectors"] = [];
  const groupingLabels: string[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind === "ident" && GROUPING.has(t.text) && toks[i + 1]?.text === "(") {
      let j = i + 2;
      for (; j < toks.length && toks[j]!.text !== ")"; j++) if (toks[j]!.kind === "ident") groupingLabels.push(toks[j]!.text);
      i = j;
      continue;
    }
    if (t.kind === "punct" && t.text === "{") { // a selector without a metric name: {__name__="x", ...}
      const m = matchers(toks, i);
      if (m.metric) selectors.push({ metric: m.metric, labels: m.labels });
      i = m.end - 1;
      continue;
    }
    if (t.kind !== "ident" || KEYWORDS.has(t.text.toLowerCase())) continue;
    if (toks[i + 1]?.text === "(") continue; // a function call
    if (toks[i - 1]?.text === "offset") continue;
    if (toks[i + 1]?.text === "{") {
      const m = matchers(toks, i + 1);
      selectors.push({ metric: t.text, labels: m.labels });
      i = m.end - 1;
    } else {
      selectors.push({ metric: t.text, labels: [] });
    }
  }
  return { selectors, groupingLabels };
}

/** Sample names and their label names in a Prometheus text exposition. */
export function exposition(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s/.exec(line);
    if (!m) continue;
    const labels = out.get(m[1]!) ?? new Set<string>();
    for (const l of (m[3] ?? "").matchAll(/([a-zA-Z_]\w*)="/g)) labels.add(l[1]!);
    out.set(m[1]!, labels);
  }
  return out;
}
