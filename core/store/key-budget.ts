// A key's own budget is a budget scope of its own: reservations and spend counters under `<project>/key/<key id>`
// (a project id has no slash, so it can never be mistaken for one). Every backend's record() adds a record's cost to
// its project's scope and to its key's.
export const keyScope = (project: string, keyId: string): string => `${project}/key/${keyId}`;

export function parseKeyScope(scope: string): { project: string; keyId: string } | undefined {
  const i = scope.indexOf("/key/");
  return i > 0 ? { project: scope.slice(0, i), keyId: scope.slice(i + 5) } : undefined;
}
