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
