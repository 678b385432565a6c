// A config read from a pipe (--config <(...), /dev/stdin) has no directory its relative paths could be beside. A
// relative log.file there made start print "listening", then spin for ever at full CPU under /dev/fd, never answering
// and ignoring SIGTERM; a relative store.path passed check. Check and start now both refuse every such setting,
// naming it and asking for an absolute path, and end.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import YAML from "yaml";
import { CLI_BIN } from "./helpers/cli.ts";

const MODELS = {
  providers: { sim: { protocol: "sim" } },
  models: { "acme/m1": { endpoints: [{ provider: "sim", model: "echo" }] } },
};
/** Check said ok to this; start then refused it (F10-3). */
const SQLITE_PATH = YAML.stringify({ store: { kind: "sqlite", path: "./data/gw.db" }, ...MODELS });
/** Start printed "listening" on this and then spun for ever, deaf to requests and to SIGTERM (F10-2). */
const LOG_AND_ASSETS = YAML.stringify({ store: { kind: "memory" }, log: { file: "./logs/gw.log" }, server: { assets_dir: "./assets" }, ...MODELS });
const START = ["start", "--port", "0", "--metrics-port", "0", "--host", "127.0.0.1", "--no-watch"];

/** The CLI with `args` and `--config <(...)`, the config on a pipe (/dev/fd/N, where nothing can be created whatever
 * the code under test does); killed (SIGKILL) after 15 s if it does not end. */
function runOnPipe(args: string[], config: string) {
  return spawnSync("bash", ["-c", 'exec "$NODE" "$CLI" "$@" --config <(printf "%s" "$CONFIG")', "bash", ...args], {
    encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL",
    env: { ...process.env, LOG_LEVEL: "silent", CONFIG: config, CLI: CLI_BIN, NODE: process.execPath },
  });
}

const refused = (line: number, field: string, value: string) =>
  new RegExp(`/dev/fd/\\d+:${line}:\\d+: ${field.replace(/\./g, "\\.")}: ${value.replace(/\./g, "\\.")} is a relative path, ` +
    `but the config is read from /dev/fd/\\d+ \\(a pipe or a device, not a file in a directory\\), which has no directory to ` +
    `resolve it against: write an absolute path`);

describe.skipIf(process.platform === "win32")("a config on a pipe with relative path settings", () => {
  for (const command of [["check"], START]) {
    it(`${command[0]} refuses a relative store.path by name, asking for an absolute path, and ends`, () => {
      const r = runOnPipe(command, SQLITE_PATH);
      expect(r.signal, `${command[0]} was killed: it did not end`).toBe(null);
      expect(r.stdout + r.stderr).toMatch(refused(3, "store.path", "./data/gw.db"));
      expect(r.status).toBe(1);
    }, 20_000);

    it(`${command[0]} refuses a relative log.file and server.assets_dir by name, and ends without listening`, () => {
      const r = runOnPipe(command, LOG_AND_ASSETS);
      expect(r.signal, `${command[0]} was killed: it did not end`).toBe(null);
      const out = r.stdout + r.stderr;
      expect(out).not.toContain("listening");
      expect(out).toMatch(refused(4, "log.file", "./logs/gw.log"));
      expect(out).toMatch(refused(6, "server.assets_dir", "./assets"));
      expect(r.status).toBe(1);
    }, 20_000);
  }
});
