// allow_models patterns: exact ids, or globs where `*` matches any run of characters (`anthropic/*`, `*-mini`)
// and `?` one character.
export function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  // dotAll: any character means line breaks too, so `*` covers every id (an unknown one is then a 404, not a 403).
  return new RegExp(`^${body}$`, "s");
}

export type Matcher = (modelId: string) => boolean;

export function compileAllowlist(patterns: string[] | undefined): Matcher {
  if (patterns === undefined) return () => true; // no allowlist: every model
  const exact = new Set(patterns.filter((p) => !/[*?]/.test(p)));
  const globs = patterns.filter((p) => /[*?]/.test(p)).map(globToRegExp);
  return (id) => exact.has(id) || globs.some((g) => g.test(id));
}
