// A command whose reader leaves (`model-gateway keys list --json | head -3`, `model-gateway --help | true`): the
// CLI run as a real process, its stdout a pipe whose reader has already exited, so every write to it fails (EPIPE).
import { describe, expect, it } from "vitest";
import { execFileSync, spawn, type StdioOptions } from "node:child_process";
import { once } from "node:events";
import { closeSync, constants, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI_BIN } from "../test/helpers/cli.ts";
import { freePort } from "../test/helpers/ports.ts";
import { CLOSED_PIPE_EXIT } from "./cli-closed-pipe.ts";
import { SqliteStore } from "./store/sqlite.ts";
import { sqliteGatewayYaml } from "./store/sqlite-gateway-yaml.testkit.ts";

/** The writing end of a pipe (a FIFO) whose reader was closed: the reader that left. */
function closedPipe(): number {
  const fifo = join(mkdtempSync(join(tmpdir(), "mg-fifo-")), "out");
  execFileSync("mkfifo", [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  closeSync(reader);
  return writer;
}

async function runInto(stdio: StdioOptions, args: string[]) {
  const child = spawn(process.execPath, [CLI_BIN, ...args], { stdio, env: { ...process.env, LOG_LEVEL: "silent" } });
  for (const fd of stdio as unknown[]) if (typeof fd === "number") closeSync(fd); // the child has its own copy
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  const [status] = (await once(child, "exit")) as [number | null];
  return { status, stderr: () => stderr };
}

function gatewayYaml(keys = 0): string {
  const dir = mkdtempSync(join(tmpdir(), "mg-pipe-"));
  const f = join(dir, "gateway.yaml");
  const entries = Array.from({ length: keys }, (_, i) => `      - { id: key-${i}, sha256: "${i.toString(16).padStart(64, "0")}" }\n`).join("");
  writeFileSync(f, `store: { kind: memory }
models: { "openai/gpt-4o-mini": { endpoints: [{ provider: sim, model: m }] } }
projects:
  demo:
    allow_models: ["*"]
    keys:
      - { id: first, sha256: "${"f".repeat(64)}" }
${entries}`);
  return f;
}

describe("a command whose output goes to a closed pipe", () => {
  it(`ends quietly, exit ${CLOSED_PIPE_EXIT} (as a shell reports a Unix tool SIGPIPE ended), whatever the command`, async () => {
    const big = gatewayYaml(400); // --json well over a pipe's 64 KB
    for (const args of [["--help"], ["check", gatewayYaml()], ["keys", "new", "--project", "demo"], ["keys", "list", "--config", big, "--json"]]) {
      const r = await runInto(["ignore", closedPipe(), "pipe"], args);
      expect({ args, stderr: r.stderr(), status: r.status }).toEqual({ args, stderr: "", status: CLOSED_PIPE_EXIT });
    }
  });

  it("start keeps serving, and stops as asked (exit 0)", async () => {
    const port = await freePort();
    const out = closedPipe();
    const child = spawn(process.execPath, [CLI_BIN, "start", "--config", gatewayYaml(), "--port", String(port), "--no-watch"], {
      stdio: ["ignore", out, "pipe"],
      env: { ...process.env, LOG_LEVEL: "silent" },
    });
    closeSync(out);
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = once(child, "exit") as Promise<[number | null]>;
    // Until it answers, or has exited (its banner's write failed).
    let answered = false;
    const gone = exited.then(() => true);
    while (!answered && !(await Promise.race([gone, new Promise<false>((r) => setTimeout(() => r(false), 200))]))) {
      answered = await fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.ok, () => false);
    }
    expect(answered).toBe(true);
    child.kill("SIGTERM");
    const [status] = await exited;
    expect(stderr).toBe("");
    expect(status).toBe(0);
  });
});

// `model-gateway usage ... > report.txt` on a disk that is full: /dev/full takes no byte (ENOSPC).
describe("a command whose output goes to a full disk", () => {
  it("says in one line that printing its output failed and why (exit 1), whatever the command", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-full-"));
    const sqlite = sqliteGatewayYaml(dir);
    await new SqliteStore(join(dir, "gw.db")).close();
    const runs: [string, string[]][] = [
      ["usage", ["usage", "--config", sqlite]], ["keys", ["keys", "list", "--config", gatewayYaml()]], ["check", ["check", gatewayYaml()]],
      ["", ["--help"]],
    ];
    for (const [name, args] of runs) {
      const r = await runInto(["ignore", openSync("/dev/full", "w"), "pipe"], args);
      const said = `model-gateway${name ? ` ${name}` : ""}: printing its output failed: ENOSPC: no space left on device\n`;
      expect({ args, stderr: r.stderr(), status: r.status }).toEqual({ args, stderr: said, status: 1 });
    }
  });
});

// The log's reader leaving (a dead `| tee`, a logging driver or journald restarting): stderr is a pipe nobody reads
// when the gateway next writes a log line, at shutdown or at a refusal.
describe("a gateway whose stderr reader has gone", () => {
  /** Resolves with the exit status, or "still running" after `ms` (the child is then killed). */
  async function exitWithin(child: ReturnType<typeof spawn>, ms: number): Promise<number | null | "still running"> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"still running">((r) => (timer = setTimeout(() => r("still running"), ms)));
    const status = await Promise.race([once(child, "exit").then(([s]) => s as number | null), late]);
    clearTimeout(timer);
    if (status === "still running") child.kill("SIGKILL");
    return status;
  }

  async function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
    let text = "";
    for await (const chunk of stream) {
      text += chunk;
      if (text.includes("\n")) break;
    }
    return text.split("\n")[0]!;
  }

  it("stops on SIGTERM (exit 0)", async () => {
    const port = await freePort();
    const { LOG_LEVEL: _, ...env } = process.env; // info: the shutdown writes log lines
    const child = spawn(process.execPath, [CLI_BIN, "start", "--config", gatewayYaml(), "--port", String(port), "--no-watch"], {
      stdio: ["ignore", "pipe", "pipe"], env,
    });
    expect(await firstLine(child.stdout!)).toContain(String(port)); // the banner: it serves
    child.stderr!.destroy(); // the log's reader leaves
    child.kill("SIGTERM");
    expect(await exitWithin(child, 20_000)).toBe(0);
  }, 30_000);

  it("exits 1 when it refuses to start (a second gateway on the same SQLite store, piped to a reader that left)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-refused-"));
    const cfg = join(dir, "gateway.yaml");
    // A provider whose key is unset: a log line waits in the logger's buffer when the refusal comes.
    writeFileSync(cfg, `store: { kind: sqlite, path: ${join(dir, "usage.db")} }
providers: { openai: { protocol: openai, base_url: "https://api.openai.com/v1", api_key: "\${MG_TEST_UNSET_KEY}" } }
models: { "openai/gpt-4o-mini": { endpoints: [{ provider: sim, model: m }] } }
projects: { demo: { allow_models: ["*"], keys: [{ id: first, sha256: "${"f".repeat(64)}" }] } }
`);
    const { LOG_LEVEL: _, MG_TEST_UNSET_KEY: __, ...env } = process.env;
    const first = spawn(process.execPath, [CLI_BIN, "start", "--config", cfg, "--port", String(await freePort()), "--no-watch"], {
      stdio: ["ignore", "pipe", "ignore"], env,
    });
    try {
      await firstLine(first.stdout!); // the first gateway serves, holding the store
      // `model-gateway start ... 2>&1 | head -1`: one pipe for both, whose reader leaves after the first line.
      const second = spawn("sh", ["-c", `exec "$0" "$@" 2>&1`, process.execPath, CLI_BIN, "start", "--config", cfg, "--port", String(await freePort()), "--no-watch"], {
        stdio: ["ignore", "pipe", "ignore"], env,
      });
      expect(await firstLine(second.stdout!)).toContain("refusing to start");
      second.stdout!.destroy();
      expect(await exitWithin(second, 20_000)).toBe(1);
    } finally {
      first.kill("SIGKILL");
    }
  }, 60_000);
});
