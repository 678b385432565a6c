// Edits of gateway.yaml's keys that leave the rest of the file as it was, byte for byte: the yaml package's Document
// API finds the nodes and their places in the text, and only those places are rewritten (a key added after its
// siblings with their indentation and style, a field set inside its map). Comments, alignment and quoting elsewhere
// are untouched, which re-serialising the whole document would not guarantee.
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair, type YAMLMap, type YAMLSeq } from "yaml";
import { withRotationMarks } from "./rotation-marks.ts";

export class YamlEditError extends Error {}

export type Value = string | number | boolean | { [k: string]: Value };

const PLAIN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A value as YAML flow text: strings quoted unless plain identifiers (ids), maps as `{ a: b }`. */
export function flow(v: Value, quoteAll = false): string {
  if (typeof v === "string") return !quoteAll && PLAIN.test(v) && !/^(true|false|null|yes|no|on|off|~|[0-9.]+)$/i.test(v) ? v : JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return `{ ${Object.entries(v).map(([k, x]) => `${k}: ${flow(x, k === "usd" || k === "sha256" || k === "expires_at")}`).join(", ")} }`;
}

function load(text: string): Document {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length) throw new YamlEditError(`the file is not valid YAML: ${doc.errors[0]!.message}`);
  return doc;
}

const lineStart = (text: string, at: number) => text.lastIndexOf("\n", at - 1) + 1;
const lineEnd = (text: string, at: number) => {
  const i = text.indexOf("\n", at);
  return i === -1 ? text.length : i;
};
const splice = (text: string, at: number, remove: number, insert: string) => text.slice(0, at) + insert + text.slice(at + remove);

function rangeOf(n: Node | null | undefined): [number, number] {
  const r = n?.range;
  if (!r) throw new YamlEditError("cannot tell where a node is in the file");
  return [r[0], r[1]];
}

/** Append an item to a sequence, in its style: a new `- …` line for a block sequence, `, …` inside a flow one. */
function appendItem(text: string, seq: YAMLSeq, rendered: string, after?: Node): string {
  if (seq.flow) {
    const [, end] = rangeOf(seq);
    const close = text.lastIndexOf("]", end);
    let at = close;
    while (at > 0 && /\s/.test(text[at - 1]!)) at--;
    const empty = text[at - 1] === "[";
    return splice(text, at, 0, empty ? rendered : `, ${rendered}`);
  }
  const anchor = after ?? (seq.items[seq.items.length - 1] as Node | undefined);
  if (!anchor) throw new YamlEditError("an empty block sequence");
  const [start, end] = rangeOf(anchor);
  const prefix = text.slice(lineStart(text, start), start); // "      - "
  const indent = prefix.replace(/-\s*$/, "");
  // After the anchor item's last line (its value end may sit before a trailing comment on that line).
  const at = lineEnd(text, Math.max(start, end - 1));
  return splice(text, at, 0, `\n${indent}- ${rendered}`);
}

/** Set `field: value` in a map: replace the value where the key exists, else add the pair in the map's style. */
function setField(text: string, map: YAMLMap, field: string, rendered: string): string {
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === field) as Pair<Node, Node> | undefined;
  if (pair?.value) {
    const [s, e] = rangeOf(pair.value);
    return splice(text, s, e - s, rendered);
  }
  if (map.flow) {
    const [, end] = rangeOf(map);
    const close = text.lastIndexOf("}", end);
    let at = close;
    while (at > 0 && /\s/.test(text[at - 1]!)) at--;
    return splice(text, at, 0, text[at - 1] === "{" ? `${field}: ${rendered}` : `, ${field}: ${rendered}`);
  }
  const first = map.items[0]?.key as Node | undefined;
  const last = map.items[map.items.length - 1];
  if (!first || !last) throw new YamlEditError("an empty block map");
  const [ks] = rangeOf(first);
  const indent = " ".repeat(ks - lineStart(text, ks));
  const [, ve] = rangeOf((last.value ?? last.key) as Node);
  return splice(text, lineEnd(text, Math.max(ks, ve - 1)), 0, `\n${indent}${field}: ${rendered}`);
}

function keysSeq(doc: Document, project: string): YAMLSeq {
  const projects = doc.get("projects", true);
  if (!isMap(projects)) throw new YamlEditError("the file has no projects:");
  const p = projects.get(project, true);
  if (!isMap(p)) throw new YamlEditError(`no project ${project} under projects: (declared: ${projects.items.map((i) => String((i.key as { value?: unknown })?.value ?? i.key)).join(", ") || "none"})`);
  const keys = p.get("keys", true);
  if (!isSeq(keys) || (!keys.flow && !keys.items.length)) throw new YamlEditError(`project ${project} has no keys: list to add to (write keys: [] under it)`);
  return keys;
}

function keyItem(doc: Document, project: string, id: string): { seq: YAMLSeq; item: YAMLMap } {
  const seq = keysSeq(doc, project);
  const item = seq.items.find((i) => isMap(i) && i.get("id") === id) as YAMLMap | undefined;
  if (!item) throw new YamlEditError(`project ${project} has no key ${id} in this file`);
  return { seq, item };
}

export interface YamlKey {
  project: string;
  id: string;
  sha256: string;
  expires_at?: string;
  revoked?: boolean;
  rate_limits?: { rpm?: number; tpm?: number };
  budget?: { usd: string; period?: string };
  /** The key's successor, and the key a successor replaced: recorded by `keys rotate` (rotation-marks.ts). */
  replaced_by?: string;
  rotated_from?: string;
}

/** Every project key declared in the file (not its includes), as written, with the rotation chain its comments record. */
export function yamlKeys(text: string): YamlKey[] {
  const doc = load(text);
  const raw = doc.toJS() as { projects?: Record<string, { keys?: Omit<YamlKey, "project">[] }> } | null;
  const out: YamlKey[] = [];
  for (const [project, p] of Object.entries(raw?.projects ?? {})) for (const k of p?.keys ?? []) out.push({ project, ...k });
  withRotationMarks(doc, (project) => out.filter((k) => k.project === project));
  return out;
}

/**
 * Add `note` to the comment of a key entry: at the end of its line (a flow entry's last line, a block entry's `id:`
 * line), after the comment already there. Unchanged in a flow list of keys, where a line may hold several entries.
 */
export function noteOnProjectKey(text: string, project: string, id: string, note: string): string {
  const { seq, item } = keyItem(load(text), project, id);
  if (seq.flow) return text;
  const idPair = item.items.find((p) => isScalar(p.key) && p.key.value === "id") as Pair<Node, Node> | undefined;
  const [, after] = item.flow ? rangeOf(item) : rangeOf(idPair?.value);
  const end = lineEnd(text, after);
  let at = end;
  while (at > after && /\s/.test(text[at - 1]!)) at--;
  return splice(text, at, end - at, text.slice(after, at).includes("#") ? `; ${note}` : `  # ${note}`);
}

export function addProjectKey(text: string, project: string, entry: Record<string, Value>, after?: string): string {
  const doc = load(text);
  const seq = keysSeq(doc, project);
  if (seq.items.some((i) => isMap(i) && i.get("id") === entry.id)) throw new YamlEditError(`project ${project} already has a key ${String(entry.id)}`);
  const anchor = after === undefined ? undefined : keyItem(doc, project, after).item;
  return appendItem(text, seq, flow(entry), anchor);
}

export function setProjectKeyField(text: string, project: string, id: string, field: string, value: Value): string {
  const { item } = keyItem(load(text), project, id);
  return setField(text, item, field, flow(value, field === "expires_at"));
}

/** Add an admin key under admin_keys: (the list is created at the end of the file when there is none). */
export function addAdminKey(text: string, entry: Record<string, Value>): string {
  const doc = load(text);
  const seq = doc.get("admin_keys", true);
  if (seq === undefined || seq === null) return `${text}${text.endsWith("\n") || !text ? "" : "\n"}\nadmin_keys:\n  - ${flow(entry)}\n`;
  if (!isSeq(seq) || (!seq.flow && !seq.items.length)) throw new YamlEditError("admin_keys: is not a list");
  if (seq.items.some((i) => isMap(i) && i.get("id") === entry.id)) throw new YamlEditError(`admin_keys already has a key ${String(entry.id)}`);
  return appendItem(text, seq, flow(entry));
}
