// What merging a schema's root combinators (schema-root-combinator.ts) may cost. The client chooses the schema: a few
// KB of $refs fanning out, thousands of branches or a property given differently by each can hold the event loop for
// seconds (every tenant waits) or overflow the stack. The merge counts what it does against fixed limits and, past
// one, gives up with SchemaTooComplex (the caller's 400 naming the client's field) before doing more.

/** Far above what a real tool's union needs (an MCP server's zod union has a handful of branches, tens of properties). */
export const MERGE_LIMITS = {
  /** Branches looked at, nested ones and $ref'd ones included (a $ref'd branch is merged once, then reused). */
  branches: 300,
  /** Keywords, properties and required names read from the branches. */
  steps: 10_000,
  /** Combinators inside branches inside combinators (a $ref cycle would never end). */
  depth: 16,
  /** Bytes of the merged properties, counting each use of a schema several branches share. */
  bytes: 1_000_000,
} as const;

/** What one merge has done so far: the caller may pass its own to see it. */
export interface MergeWork {
  branches: number;
  steps: number;
}

export const newMergeWork = (): MergeWork => ({ branches: 0, steps: 0 });

export class SchemaTooComplex extends Error {}

/** Counts `n` more steps; past the limit the merge stops. */
export function spend(work: MergeWork, n: number): void {
  work.steps += n;
  if (work.steps > MERGE_LIMITS.steps) throw new SchemaTooComplex(`its branches hold more than ${MERGE_LIMITS.steps} keywords, properties and required names`);
}

/** Counts one more branch; past the limit the merge stops. */
export function visitBranch(work: MergeWork): void {
  if (++work.branches > MERGE_LIMITS.branches) throw new SchemaTooComplex(`it has more than ${MERGE_LIMITS.branches} branches (nested and $ref'd ones counted)`);
}
