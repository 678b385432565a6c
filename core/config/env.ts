// ${VAR} and ${VAR:-default} interpolation in config strings.

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface Interpolated {
  value: string;
  /** Variables that were unset (or empty) and had no default. */
  missing: string[];
}

export function interpolate(input: string, env: Record<string, string | undefined>): Interpolated {
  const missing: string[] = [];
  const value = input.replace(REF, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    if (v !== undefined && v !== "") return v;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return "";
  });
  return { value, missing };
}

/**
 * Why variables gave nothing, as an operator fixes it: "$A is not set", "$A, $B are not set, $C is empty" (an
 * empty variable is set: saying "not set" sends the reader to look for a missing export). `sigil` "" names them bare.
 */
export function unsetPhrase(vars: readonly string[], env: Record<string, string | undefined>, sigil = "$"): string {
  const list = (vs: readonly string[], what: string) => `${vs.map((v) => sigil + v).join(", ")} ${vs.length > 1 ? "are" : "is"} ${what}`;
  const empty = vars.filter((v) => env[v] === "");
  const unset = vars.filter((v) => env[v] !== "");
  return [unset.length ? list(unset, "not set") : "", empty.length ? list(empty, "empty") : ""].filter(Boolean).join(", ");
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const REF_AT = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/y;

/**
 * The first thing in `s` that looks like a variable reference but is not one this file expands, with how to write
 * it: `${VAR-default}` (the shell's form), `${VAR:=x}` and kin, `${VAR` unclosed, `$VAR` without braces. Used as
 * written, each would reach a provider as its api_key or a URL. `$5`, `$lower` and a `$` at the end are plain text.
 */
export function malformedReference(s: string): string | undefined {
  for (let i = s.indexOf("$"); i !== -1; i = s.indexOf("$", i + 1)) {
    if (s[i + 1] === "{") {
      REF_AT.lastIndex = i;
      const ok = REF_AT.exec(s);
      if (ok) {
        i += ok[0].length - 1;
        continue;
      }
      const close = s.indexOf("}", i);
      const name = NAME.exec(s.slice(i + 2))?.[0];
      const write = name ? `write \${${name}} (or \${${name}:-default})` : "write ${NAME} or ${NAME:-default}";
      if (close === -1) return `${s.slice(i, i + 40)} is not closed: ${write}`;
      const ref = s.slice(i, close + 1);
      const form = name ? /^(:?[-=?+])(.*)$/s.exec(s.slice(i + 2 + name.length, close)) : null;
      if (form?.[1] === "-") return `${ref} is not expanded (the shell's form without ':'): use \${${name}:-${form[2]}}`;
      if (form) return `${ref} is not expanded: only \${NAME} and \${NAME:-default} are (use \${${name}:-${form[2]}})`;
      return `${ref} is not a variable reference: ${write}`;
    }
    const bare = /^[A-Z_][A-Z0-9_]*/.exec(s.slice(i + 1))?.[0];
    // A key may hold a $ of its own (sk-ab$Cd): only a variable keeps it as written.
    if (bare) return `$${bare} is not expanded: write \${${bare}} (or \${${bare}:-default}), or, if the $ is literal, put the whole value in an environment variable and write \${NAME}`;
  }
  return undefined;
}

export const hasReference = (s: string) => s.includes("${");

/** The first `${VAR}` reference in a string, if any (a lone "${" that names no variable is plain text). */
export function firstReference(s: string): string | undefined {
  REF.lastIndex = 0;
  const m = REF.exec(s);
  REF.lastIndex = 0;
  return m?.[0];
}

/**
 * Where `${VAR}` is expanded: the sections that configure how the gateway runs and reaches its upstreams — the only
 * places a secret belongs — and that no endpoint ever shows. Never in `models` (the public catalog, GET /v1/models,
 * and all an included file may hold), in projects' keys and policies, or in `include` / `pipeline`: an environment
 * variable there could only publish a secret or be a mistake.
 */
export const EXPANDED_IN = "server, store, log, metrics, telemetry, routing, providers, mcp_servers, projects.<id>.providers, projects.<id>.mcp.servers and plugins.<name>.options";

export function expandsAt(path: readonly (string | number)[]): boolean {
  switch (path[0]) {
    case "server":
    case "store":
    case "log":
    case "metrics":
    case "telemetry":
    case "routing":
    case "providers":
    case "mcp_servers":
      return true;
    case "projects":
      return path[2] === "providers" || (path[2] === "mcp" && path[3] === "servers");
    case "plugins":
      return path[2] === "options";
    default:
      return false;
  }
}
