// YAML sources with positions, so every config problem can say file:line:column.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import YAML, { LineCounter, isMap, isScalar, isSeq, visit, type Document, type Node, type Pair } from "yaml";
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

/**
 * The file parsed, or undefined with its problems added. `cannotRead`: where a file that cannot be read is reported
 * (an included file: at its entry under include:, in the file that names it). `read`: where its text comes from
 * (the disk, unless a loader was given the texts to use: ./config-texts.ts).
 */
export function readYaml(file: string, problems: ConfigProblem[], cannotRead?: (error: string) => ConfigProblem, read = (f: string) => readFileSync(f, "utf8")): YamlSource | undefined {
  let text: string;
  try {
    text = read(file);
  } catch (err) {
    const error = (err as Error).message;
    problems.push(cannotRead?.(error) ?? { file, line: 1, column: 1, message: `cannot read config file: ${error}` });
    return undefined;
  }
  const lines = new LineCounter();
  // merge: `<<: *defaults` (YAML 1.1 merge keys) shares settings between projects, keys or models, as operators
  // expect from other tools' YAML.
  const doc = YAML.parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length) {
    const at = (offset: number, message: string): ConfigProblem => {
      const pos = lines.linePos(offset);
      return { file, line: pos.line, column: pos.col, message };
    };
    for (const e of doc.errors) {
      if (e.code === "DUPLICATE_KEY") continue; // named below, with both lines
      if (e.code === "MULTIPLE_DOCS") {
        const found = YAML.parseAllDocuments(text);
        const count = Array.isArray(found) ? found.length : 2;
        problems.push(at(e.pos[0], `${basename(file)} must be one YAML document (found ${count}; remove the '---' separators)`));
        continue;
      }
      problems.push(at(e.pos[0], e.message.split("\n")[0]!));
    }
    const twice = duplicateKeys(doc, lines);
    for (const d of twice) problems.push(at(d.offset, d.message));
    if (!twice.length) {
      for (const e of doc.errors) if (e.code === "DUPLICATE_KEY") problems.push(at(e.pos[0], e.message.split("\n")[0]!));
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

/** Each key given twice in one mapping: at the second, naming the key and both lines (YAML would keep one of them). */
function duplicateKeys(doc: Document, lines: LineCounter): { offset: number; message: string }[] {
  const out: { offset: number; message: string }[] = [];
  visit(doc, {
    Map: (_key, map) => {
      const first = new Map<string, number>();
      for (const pair of map.items as Pair<Node, Node>[]) {
        if (!isScalar(pair.key) || !pair.key.range) continue;
        const name = String(pair.key.value);
        const offset = pair.key.range[0];
        const seen = first.get(name);
        if (seen === undefined) first.set(name, offset);
        else out.push({ offset, message: `key "${name}" is given twice in this mapping, at lines ${lines.linePos(seen).line} and ${lines.linePos(offset).line}: keep one` });
      }
    },
  });
  return out;
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
