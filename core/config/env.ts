// ${VAR} and ${VAR:-default} interpolation in config strings.

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface Interpolated {
  value: string;
  /** Variables that were unset and had no default. */
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
