// The chain of a gateway.yaml key rotation (`model-gateway keys rotate --config`), recorded in comments on the two
// entries: `# rotated to team-r2` on the retiring key, `# rotated from team` on its successor. Comments, not fields:
// a gateway of an earlier release refuses fields it does not know (its schema has additionalProperties: false), and
// a file this command wrote must stay loadable there (a rolling upgrade, a package upgraded before the restart, a
// rollback). The fields replaced_by / rotated_from, written by one release, are still read; a field wins.
import { isMap, isSeq, type Document, type Node, type Pair, type YAMLMap } from "yaml";

export interface RotationChain {
  replaced_by?: string;
  rotated_from?: string;
}

const PLAIN_ID = /^[A-Za-z0-9_.:@-]+$/;
const MARK = /(?:^|[\s;,(])rotated (to|from) ("(?:[^"\\]|\\.)*"|[^\s;,()"]+)/g;

/** The comment text that records the pair: `rotated to <id>` / `rotated from <id>` (an unusual id JSON-quoted). */
export function rotationNote(direction: "to" | "from", id: string): string {
  return `rotated ${direction} ${PLAIN_ID.test(id) ? id : JSON.stringify(id)}`;
}

/** Every comment inside a key entry: after a flow entry, on the lines of a block one. */
function commentsOf(item: YAMLMap): string[] {
  const out = [item.comment];
  (item.items as Pair<Node | null, Node | null>[]).forEach((p, i) => {
    out.push(p.key?.comment, p.value?.comment);
    if (i > 0) out.push(p.key?.commentBefore);
  });
  return out.filter((c): c is string => typeof c === "string");
}

/** The chain the comments of one entry record, naming only keys of its project (free text is not a record). */
function chainOfEntry(item: YAMLMap, ids: Set<string>): RotationChain {
  const chain: RotationChain = {};
  for (const c of commentsOf(item)) {
    for (const m of c.matchAll(MARK)) {
      const id = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
      if (!ids.has(id)) continue;
      if (m[1] === "to") chain.replaced_by ??= id;
      else chain.rotated_from ??= id;
    }
  }
  return chain;
}

/** The chain recorded in comments, by project and key id (only keys that record one). */
export function rotationMarks(doc: Document): Map<string, Map<string, RotationChain>> {
  const out = new Map<string, Map<string, RotationChain>>();
  const projects = doc.get("projects", true);
  if (!isMap(projects)) return out;
  for (const pair of projects.items as Pair<Node | null, Node | null>[]) {
    const project = (pair.key as { value?: unknown } | null)?.value;
    const keys = isMap(pair.value) ? pair.value.get("keys", true) : undefined;
    if (typeof project !== "string" || !isSeq(keys)) continue;
    const entries = keys.items.filter((i): i is YAMLMap => isMap(i));
    const ids = new Set(entries.map((e) => e.get("id")).filter((id): id is string => typeof id === "string"));
    for (const e of entries) {
      const id = e.get("id");
      const chain = chainOfEntry(e, ids);
      if (typeof id !== "string" || (!chain.replaced_by && !chain.rotated_from)) continue;
      if (!out.has(project)) out.set(project, new Map());
      out.get(project)!.set(id, chain);
    }
  }
  return out;
}

/** Key entries given the chain their comments record, where their fields record none. */
export function withRotationMarks<K extends { id: string } & RotationChain>(doc: Document, keysOf: (project: string) => K[] | undefined): void {
  for (const [project, marks] of rotationMarks(doc)) {
    for (const k of keysOf(project) ?? []) {
      const chain = marks.get(k.id);
      if (!chain) continue;
      if (chain.replaced_by && k.replaced_by === undefined) k.replaced_by = chain.replaced_by;
      if (chain.rotated_from && k.rotated_from === undefined) k.rotated_from = chain.rotated_from;
    }
  }
}
