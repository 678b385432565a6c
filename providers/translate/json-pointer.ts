// A local JSON Schema reference ("#/$defs/Node", "#/definitions/A", "#") resolved in the schema holding it.

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => !!v && typeof v === "object" && !Array.isArray(v);

/** What a JSON pointer (RFC 6901, as in a URI fragment: percent-decoded first) points at in `root`, or undefined. */
export function pointer(root: unknown, path: string): unknown {
  let at: unknown = root;
  if (path === "") return root;
  for (const raw of path.split("/").slice(1)) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    if (Array.isArray(at)) at = at[Number(key)];
    else if (isObj(at)) at = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** What `ref` points at in `root` when it is local ("#…"); undefined for a remote or dangling one. */
export const localRef = (root: unknown, ref: string): unknown => (ref.startsWith("#") ? pointer(root, ref.slice(1)) : undefined);
