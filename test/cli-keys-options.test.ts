// `model-gateway keys` subcommands share one option parser: an option the subcommand (or its mode) does not use is
// refused, exit 2, naming it, instead of being silently ignored (a --rpm on rotate, a --sandbox the admin API never
// sees), and nothing is edited.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BIN = resolve("bin/model-gateway.mjs");
const run = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent", MG_ADMIN_KEY: "" }, timeout: 30_000 });

describe("keys options a subcommand does not use", () => {
  const file = join(mkdtempSync(join(tmpdir(), "mg-keys-options-")), "gateway.yaml");
  const text = `projects:\n  demo:\n    keys:\n      - { id: ci, sha256: "${"a".repeat(64)}" }\n`;
  writeFileSync(file, text);

  // FILE: the gateway.yaml above; URL: a gateway never called (the refusal comes first).
  const named: Record<string, string> = { FILE: file, URL: "http://127.0.0.1:1" };
  const cases: [string, string][] = [
    ["list --overlap 1h --config FILE", "keys list: --overlap is not an option of keys list (it takes --config, --url, --admin-key, --project, --json)"],
    ["rotate --project demo --id ci --rpm 5 --config FILE", "keys rotate: --rpm is not an option of keys rotate (the new key keeps the retiring key's rate_limits and budget)"],
    ["rotate --project demo --id ci --budget-period day --config FILE", "keys rotate: --budget-period is not an option of keys rotate (the new key keeps the retiring key's rate_limits and budget)"],
    ["rotate --project demo --id ci --sandbox --url URL --admin-key mg_admin_x", "keys rotate: --sandbox is not an option of keys rotate --url (the admin API gives the new key the retiring key's kind)"],
    ["revoke --project demo --id ci --expires 2031-01-01 --config FILE", "keys revoke: --expires is not an option of keys revoke (it takes --config, --url, --admin-key, --project, --id)"],
    ["new --project demo --json --config FILE", "keys new: --json is not an option of keys new (it takes --config, --url, --admin-key, --project, --id, --sandbox, --expires, --rpm, --tpm, --budget, --budget-period)"],
    ["new --project demo --scope read --config FILE", "keys new: --scope is not an option of keys new (it is for keys new --admin)"],
    ["new --admin --scope read --rpm 5 --config FILE", "keys new: --rpm is not an option of keys new --admin (it takes --scope, --id, --expires, --config)"],
    ["new --admin --scope read --url URL", "keys new: --url is not an option of keys new --admin (admin keys live in gateway.yaml only: --config)"],
    ["revoke --project demo --id ci --admin-key mg_admin_x --config FILE", "keys revoke: --admin-key is not an option without --url (it is the admin API's key)"],
    ["list --config FILE --url URL", "keys list: --config and --url together: pass one (--config edits the file, --url calls a running gateway)"],
  ];

  it.each(cases)("keys %s", (args, message) => {
    const r = run(["keys", ...args.split(" ").map((a) => named[a] ?? a)]);
    expect(r.stderr).toBe(`${message}\n`);
    expect(r.stdout).toBe("");
    expect(r.status).toBe(2);
    expect(readFileSync(file, "utf8")).toBe(text);
  });
});
