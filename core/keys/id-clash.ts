// A key id of gateway.yaml that a key created through the admin API (kept in the store) already has in the same
// project. Both keys would then be logged and limited under one id, and the admin API — which leaves gateway.yaml's
// keys to the file — could not reach the stored one. The admin API refuses to create such a key; start and reload
// refuse a gateway.yaml that declares one, naming both keys.
import type { LoadedConfig } from "../config/loaded.ts";
import type { StoredKey } from "../store/api-keys-types.ts";
import { locate, readYaml, type ConfigProblem } from "../config/source.ts";

function statusOf(k: StoredKey, now: number): string {
  if (k.revokedAt !== null) return "revoked";
  if (k.expiresAt !== null && k.expiresAt <= now) return "expired";
  return "active";
}

/** One problem per gateway.yaml key whose project already has a stored key of that id (revoked and expired ones too). */
export function apiKeyIdClashes(config: LoadedConfig, stored: readonly StoredKey[], now = Date.now()): ConfigProblem[] {
  const byId = new Map(stored.map((k) => [`${k.project}\0${k.id}`, k]));
  const problems: ConfigProblem[] = [];
  let src: ReturnType<typeof readYaml> | null = null;
  for (const [pid, p] of config.projects) {
    p.config.keys.forEach((k, i) => {
      const api = byId.get(`${pid}\0${k.id}`);
      if (!api) return;
      // Positions only for the message: the file was just read, projects are never in an included file.
      src ??= readYaml(config.file, []) ?? undefined;
      const at = src ? locate(src, ["projects", pid, "keys", i, "id"]) : { file: config.file, line: 1, column: 1 };
      const made = `created ${new Date(api.createdAt).toISOString()}${api.createdBy ? ` by ${api.createdBy}` : ""}, ${statusOf(api, now)}`;
      problems.push({
        ...at,
        message: `project ${pid}: key id ${k.id} of gateway.yaml is already the id of a key created through the admin API (${pid}/${k.id}, ${made}); ` +
          "two keys of one id would share its revocation, limits and usage records: give this key another id",
      });
    });
  }
  return problems;
}
