// Which methods a path is served with, read from the routes as registered (h3 syntax: `:name` is one segment, `**`
// the rest of the path), so a known path asked with another method is a 405 whose Allow header lists them all:
// /api/v1/responses/{id} (GET, DELETE) as much as /api/v1/chat/completions (POST).
interface Pattern { methods: Set<string>; test: RegExp }

/**
 * The methods a route registered for `method` is served with: a GET route answers HEAD too (RFC 9110 §9.1: the GET's
 * status and headers without its body), as monitoring tools and load balancers probe with HEAD.
 */
export const withHead = (method: string): string[] => (method.toUpperCase() === "GET" ? ["GET", "HEAD"] : [method.toUpperCase()]);

const escape = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

function compile(route: string): RegExp {
  const parts = route.split("/").map((seg) => (seg === "**" ? "\u0000" : seg.startsWith(":") || seg === "*" ? "[^/]+" : escape(seg)));
  // `/a/**` matches /a, /a/ and anything below it.
  return new RegExp(`^${parts.join("/").replace("/\u0000", "(?:/.*)?")}/?$`);
}

export class RouteMethods {
  private readonly patterns = new Map<string, Pattern>();

  add(method: string, route: string): void {
    let p = this.patterns.get(route);
    if (!p) this.patterns.set(route, (p = { methods: new Set(), test: compile(route) }));
    p.methods.add(method.toUpperCase());
  }

  /** Every method some route serves `path` with, in the order they were added. */
  for(path: string): string[] {
    const out = new Set<string>();
    for (const p of this.patterns.values()) if (p.test.test(path)) for (const m of p.methods) out.add(m);
    return [...out];
  }
}
