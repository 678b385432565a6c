// A named flag carried on an error object across layers (a stream's driver sets it, the writer or the meter reads it),
// without widening the error classes: a registered symbol, so a copy of this module in a plugin's bundle agrees.
export interface ErrorMark {
  /** Marks `err` and returns it (to throw it in one expression). */
  set<E extends object>(err: E): E;
  has(err: unknown): boolean;
}

export function errorMark(name: string): ErrorMark {
  const key = Symbol.for(`model-gateway.${name}`);
  return {
    set(err) {
      (err as Record<symbol, unknown>)[key] = true;
      return err;
    },
    has: (err) => typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[key] === true,
  };
}
