import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GatewayConfig } from "../generated/types/gateway.ts";
import type { ConfigProblem } from "./source.ts";
import { checkRelativeIncludes, checkRelativePaths } from "./relative-paths-check.ts";

const at = (path: (string | number)[], message: string): ConfigProblem => ({ file: "gw.yaml", line: 1, column: 1, message: `${path.join(".")}|${message}` });
const config = {
  store: { kind: "sqlite", path: "./data/gw.db", spool_dir: "/var/spool/gw" },
  log: { file: "gw.log" },
  providers: { v: { protocol: "vertex", credentials_file: "./sa.json" } },
  plugins: { mine: { module: "./mine.ts" }, pkg: { module: "some-package" } },
  mcp_servers: { local: { command: "srv", cwd: "work" } },
} as unknown as GatewayConfig;

describe("relative path settings", () => {
  it("in a regular file in an ordinary directory: accepted (resolved beside the file)", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-relpaths-"));
    writeFileSync(join(dir, "gw.yaml"), "");
    const problems: ConfigProblem[] = [];
    checkRelativePaths(config, join(dir, "gw.yaml"), dir, () => true, at, problems);
    checkRelativeIncludes(["models.yaml"], join(dir, "gw.yaml"), dir, at, problems);
    expect(problems).toEqual([]);
  });

  it("in a config under /dev: each relative one refused by name (absolute paths and package names kept)", () => {
    const problems: ConfigProblem[] = [];
    checkRelativePaths(config, "/dev/null", "/dev", () => true, at, problems);
    checkRelativeIncludes(["models.yaml", "/etc/m.yaml"], "/dev/null", "/dev", at, problems);
    expect(problems.map((p) => p.message.split("|")[0])).toEqual(["store.path", "log.file", "providers.v.credentials_file", "mcp_servers.local.cwd", "plugins.mine.module", "include.0"]);
    expect(problems[1]!.message).toBe("log.file|log.file: gw.log is a relative path, but the config is read from /dev/null " +
      "(a pipe or a device, not a file in a directory), which has no directory to resolve it against: write an absolute path");
  });
});
