// YAML aliases (`*name`) stand for a whole copy of their anchor's value (`&name`), so a few lines can stand for
// billions of values (nested aliases of aliases, "billion laughs"): everything after the parse (the schema check,
// ${VAR} interpolation, the reload diff) walks the copies. The yaml library guards this with a flat limit of 100
// alias uses, which also refuses an honest file that gives 500 keys the same `rate_limits: *per_key`. Instead, the
// size the file expands to is bounded, scaled to the file itself; and an alias inside the value it names (which
// would make a value contain itself) is refused.
import { isAlias, isMap, isPair, isSeq, visit, type Alias, type Document, type Node } from "yaml";

/** Values the expanded file may hold: this many at least, else this many times what is written. */
const MIN_BOUND = 100_000;
const PER_WRITTEN = 10;

export type AliasProblem = { alias: Alias; message: string };

export function aliasProblem(doc: Document): AliasProblem | undefined {
  // Each alias's anchor: the last node with that anchor before the alias, in document order (as the yaml library
  // resolves it).
  const anchors = new Map<string, Node>();
  const sourceOf = new Map<Alias, Node>();
  let written = 0;
  visit(doc, {
    Node: (_key, node) => {
      written++;
      if (isAlias(node)) {
        const source = anchors.get(node.source);
        if (source) sourceOf.set(node, source);
      } else if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  if (sourceOf.size === 0) return undefined;

  const bound = Math.max(MIN_BOUND, PER_WRITTEN * written);
  let count = 0;
  const onPath = new Set<unknown>();
  let outermost: Alias | undefined;
  class Stop extends Error {
    constructor(readonly problem: AliasProblem) {
      super(problem.message);
    }
  }
  const walk = (node: unknown): void => {
    if (++count > bound) {
      throw new Stop({ alias: outermost!, message: `YAML aliases make this file stand for more than ${bound} values (each *alias is a whole copy of its anchor's value, ` +
        "aliases of aliases multiply): refused, as it could exhaust the gateway's memory; alias smaller values, or fewer times" });
    }
    if (isAlias(node)) {
      const source = sourceOf.get(node);
      if (!source) return; // unresolved: the parser reports it
      if (onPath.has(source)) {
        throw new Stop({ alias: outermost ?? node, message: `alias *${node.source} is inside the value its anchor &${node.source} names: a value cannot contain itself` });
      }
      const outer = outermost === undefined;
      if (outer) outermost = node;
      walk(source);
      if (outer) outermost = undefined;
      return;
    }
    if (!isMap(node) && !isSeq(node) && !isPair(node)) return;
    onPath.add(node);
    if (isPair(node)) {
      walk(node.key);
      walk(node.value);
    } else for (const item of node.items) walk(item);
    onPath.delete(node);
  };
  try {
    walk(doc.contents);
  } catch (err) {
    if (err instanceof Stop) return err.problem;
    throw err;
  }
  return undefined;
}
