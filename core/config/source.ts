// YAML sources with positions, so every config problem can say file:line:column.
import { readFileSync } from "node:fs";
import YAML, { LineCounter, isMap, isScalar, isSeq, type Document, type Node, type Pair } from "yaml";
import { aliasProblem } from "./alias-bound.ts";

export interface ConfigProblem {
  file: string;
  line: number;
  column: number;
  message: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ConfigError";
  }
}

export const formatProblem = (p: ConfigProblem) => `${p.file}:${p.line}:${p.column}: ${p.message}`;

export interface YamlSource {
  file: string;
  doc: Document;
  lines: LineCounter;
  value: unknown;
  /** Nothing but whitespace, comments or null (value is {} then). */
  empty: boolean;
}

export function readYaml(file: string, problems: ConfigProblem[]): YamlSource | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    problems.push({ file, line: 1, column: 1, message: `cannot read config file: ${(err as Error).message}` });
    return undefined;
  }
  const lines = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    for (const e of doc.errors) {
      const pos = lines.linePos(e.pos[0]);
      problems.push({ file, line: pos.line, column: pos.col, message: e.message.split("\n")[0]! });
    }
    return undefined;
  }
  const aliases = aliasProblem(doc);
  if (aliases) {
    const pos = lines.linePos(aliases.alias.range?.[0] ?? 0);
    problems.push({ file, line: pos.line, column: pos.col, message: aliases.message });
    return undefined;
  }
  let value: unknown;
  try {
    // The alias bound above replaces the library's flat limit of 100 uses (maxAliasCount: -1 lifts it).
    value = doc.toJS({ maxAliasCount: -1 });
  } catch (err) {
    problems.push({ file, line: 1, column: 1, message: (err as Error).message });
    return undefined;
  }
  return { file, doc, lines, value: value ?? {}, empty: value == null };
}

/** Position of the node at `path` (or of the key named by the last segment when `atKey`), else its nearest ancestor. */
export function locate(src: YamlSource, path: (string | number)[], atKey = false): ConfigProblem {
  let node: Node | null = src.doc.contents as Node | null;
  let best: [number, number] | undefined = node?.range ? [node.range[0], node.range[1]] : undefined;
  for (let i = 0; i < path.length && node; i++) {
    const seg = path[i]!;
    let next: Node | null = null;
    if (isMap(node)) {
      const pair = (node.items as Pair<Node, Node>[]).find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (pair) {
        if (atKey && i === path.length - 1 && pair.key?.range) {
          best = [pair.key.range[0], pair.key.range[1]];
          break;
        }
        next = (pair.value as Node | null) ?? (pair.key as Node);
      }
    } else if (isSeq(node)) {
      next = (node.items[Number(seg)] as Node | undefined) ?? null;
    }
    if (!next) break;
    node = next;
    if (node.range) best = [node.range[0], node.range[1]];
  }
  const pos = src.lines.linePos(best?.[0] ?? 0);
  return { file: src.file, line: pos.line, column: pos.col, message: "" };
}
