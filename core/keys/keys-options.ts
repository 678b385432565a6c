// Which options each `model-gateway keys` subcommand reads. The subcommands share one parser (keys-command.ts), so an
// option only another one takes would parse and then be ignored — a --rpm on rotate, a --sandbox the admin API never
// sees, an --admin-key with no --url — and the command would do something other than asked. Such an option is refused.

const TAKES: Record<string, string[]> = {
  list: ["config", "url", "admin-key", "project", "json"],
  new: ["config", "url", "admin-key", "project", "id", "sandbox", "expires", "rpm", "tpm", "budget", "budget-period"],
  "new --admin": ["admin", "scope", "id", "expires", "config"],
  revoke: ["config", "url", "admin-key", "project", "id"],
  rotate: ["config", "url", "admin-key", "project", "id", "overlap", "new-id", "sandbox", "expires"],
};

/** Why an option is not taken, where the list of the options that are would not say it. */
function reason(command: string, option: string): string | undefined {
  if (command === "rotate" && ["rpm", "tpm", "budget", "budget-period"].includes(option)) return "the new key keeps the retiring key's rate_limits and budget";
  if (command === "new" && option === "scope") return "it is for keys new --admin";
  if (command === "new --admin" && option === "url") return "admin keys live in gateway.yaml only: --config";
  return undefined;
}

/** The first option given that `keys <sub>` does not use, as one line saying why; undefined when it uses them all. */
export function unusedOption(sub: string, given: Record<string, unknown>): string | undefined {
  const has = (o: string) => given[o] !== undefined;
  if (has("config") && has("url")) return "--config and --url together: pass one (--config edits the file, --url calls a running gateway)";
  const command = sub === "new" && given.admin === true ? "new --admin" : sub;
  const takes = TAKES[command];
  if (!takes) return undefined;
  for (const o of Object.keys(given)) {
    if (!has(o) || takes.includes(o)) continue;
    const listed = takes.filter((t) => t !== "admin").map((t) => `--${t}`).join(", ");
    return `--${o} is not an option of keys ${command} (${reason(command, o) ?? `it takes ${listed}`})`;
  }
  if (has("admin-key") && !has("url")) return "--admin-key is not an option without --url (it is the admin API's key)";
  if (command === "rotate" && has("url") && has("sandbox")) return "--sandbox is not an option of keys rotate --url (the admin API gives the new key the retiring key's kind)";
  return undefined;
}
