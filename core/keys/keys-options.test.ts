import { describe, expect, it } from "vitest";
import { unusedOption } from "./keys-options.ts";

describe("the options each keys subcommand uses", () => {
  it("takes every option the subcommand and its mode use", () => {
    expect(unusedOption("rotate", { project: "p", id: "k", overlap: "1h", "new-id": "n", expires: "2031-01-01", sandbox: true, config: "f" })).toBeUndefined();
    expect(unusedOption("rotate", { project: "p", id: "k", expires: "2031-01-01", url: "u", "admin-key": "a" })).toBeUndefined();
    expect(unusedOption("new", { project: "p", sandbox: true, rpm: "1", tpm: "2", budget: "3", "budget-period": "day", url: "u" })).toBeUndefined();
    expect(unusedOption("new", { admin: true, scope: "read", id: "x", expires: "2031-01-01" })).toBeUndefined();
    expect(unusedOption("list", { json: true, project: "p" })).toBeUndefined();
  });

  it("names the first option given that the subcommand would ignore", () => {
    expect(unusedOption("rotate", { project: "p", tpm: "5", json: true })).toBe("--tpm is not an option of keys rotate (the new key keeps the retiring key's rate_limits and budget)");
    expect(unusedOption("list", { admin: true })).toBe("--admin is not an option of keys list (it takes --config, --url, --admin-key, --project, --json)");
    expect(unusedOption("new", { admin: true, scope: "read", "admin-key": "a" })).toBe("--admin-key is not an option of keys new --admin (it takes --scope, --id, --expires, --config)");
  });
});
