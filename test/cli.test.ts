// The operator's command line, run as a real process.
import { describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { createServer } from "node:net";

const BIN = resolve("bin/model-gateway.mjs");
const run = (args: string[], env: Record<string, string> = {}, cwd?: string) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, ...env, LOG_LEVEL: "silent" }, timeout: 30_000, ...(cwd ? { cwd } : {}) });

function tmpConfig(text: string, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "mg-cli-"));
  for (const [n, t] of Object.entries(extra)) writeFileSync(join(dir, n), t);
  const file = join(dir, "gateway.yaml");
  writeFileSync(file, text);
  return file;
}

const BROKEN = `providers:
  openai: { protocol: openai, api_key: sk }
models:
  openai/a:
    endpoints:
      - { provider: openia, model: a, pricing: { input: "0,1" } }
plugins:
  tagger: { module: ../../work/none.mjs }
pipeline: [router, auth, nope]
`;

describe("model-gateway usage errors", () => {
  it("prints the usage for --help after a command, exit 0", () => {
    for (const cmd of ["start", "check", "usage"]) {
      const r = run([cmd, "--help"]);
      expect(r.stdout).toContain("model-gateway start [--config gateway.yaml]");
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    }
  });

  it("names an unknown option or a missing value, shows the usage, exit 2, no stack trace", () => {
    const bogus = run(["start", "--bogus"]);
    expect(bogus.stderr).toContain("model-gateway start: Unknown option '--bogus'");
    expect(bogus.stderr).toContain("Usage:");
    expect(bogus.stderr).not.toMatch(/\n\s+at /);
    expect(bogus.status).toBe(2);
    const missing = run(["keys", "new", "--project"]);
    expect(missing.stderr).toContain("'--project <value>' argument missing");
    expect(missing.status).toBe(2);
  });

  it("names an unknown command, shows the usage on stderr, exit 2 like an unknown option", () => {
    const r = run(["frobnicate"]);
    expect(r.stderr).toContain('model-gateway: unknown command "frobnicate"');
    expect(r.stderr).toContain("Usage:");
    expect(r.stdout).toBe("");
    expect(r.status).toBe(2);
  });
});

/** The usage entries of a help text by command and first option ("keys new --admin"), each with the options it shows. */
function helpEntries(text: string): Map<string, Set<string>> {
  const entries = new Map<string, Set<string>>();
  let current: Set<string> | undefined;
  for (const line of text.split("\n")) {
    const head = /^\s*model-gateway ((?:\w+ )?\w+)\s+\[?(--[a-z][\w-]*)/.exec(line);
    if (head) entries.set(`${head[1]} ${head[2]}`, (current = new Set()));
    else if (!current || !/^\s{4,}\[/.test(line)) current = undefined; // a wrapped entry goes on with an indented "["
    for (const flag of line.match(/--[a-z][\w-]*/g) ?? []) current?.add(flag);
  }
  return entries;
}

describe("model-gateway --help", () => {
  it("shows every option the keys parser accepts, on the same entries as keys' own usage", () => {
    const help = run(["--help"]).stdout;
    // keys-command.ts's parseArgs table, read from the source so that an option added there fails here until documented.
    const table = /const OPTIONS = \{([\s\S]*?)\} as const/.exec(readFileSync("core/keys/keys-command.ts", "utf8"))?.[1] ?? "";
    const accepted = [...table.matchAll(/"?([a-z][\w-]*)"?: \{ type:/g)].map((m) => `--${m[1]}`);
    expect(accepted).toEqual(expect.arrayContaining(["--config", "--budget-period", "--new-id", "--admin-key"]));
    const shown = new Set(help.match(/--[a-z][\w-]*/g));
    expect(accepted.filter((o) => !shown.has(o))).toEqual([]);
    const entries = helpEntries(help);
    const own = helpEntries(run(["keys"]).stderr);
    expect([...own.keys()]).toEqual(["keys list --config", "keys new --project", "keys new --admin", "keys revoke --project", "keys rotate --project"]);
    for (const [entry, flags] of own) expect({ entry, missing: [...flags].filter((f) => !entries.get(entry)?.has(f)) }).toEqual({ entry, missing: [] });
  });
});

describe("model-gateway check", () => {
  it("exits 0 on the embedded default config", () => {
    const r = run(["check", resolve("gateway.yaml")]);
    expect(r.stdout).toContain(": ok (");
    expect(r.status).toBe(0);
  });

  it("exits 1 and prints every problem as file:line:column: message", () => {
    const file = tmpConfig(BROKEN);
    const r = run(["check", file]);
    expect(r.status).toBe(1);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe(`${file}:6:57: models.openai/a.endpoints.0.pricing.input: must be a decimal string such as "0.0000025" (quoted, no exponent)`);
    const fixed = tmpConfig(BROKEN.replace('"0,1"', '"0.1"'));
    const again = run(["check", fixed]).stdout.trim().split("\n");
    expect(again).toEqual([
      `${fixed}:6:21: model openai/a: endpoint names unknown provider "openia" (declared: openai, sim)`,
      expect.stringMatching(new RegExp(`^${fixed}:8:21: cannot load plugin "tagger" from ../../work/none.mjs: `)),
      expect.stringMatching(new RegExp(`^${fixed}:9:26: unknown plugin "nope"`)),
    ]);
  });

  it("exits 1 on an empty file (or one of only comments) rather than calling it ok with no projects", () => {
    for (const text of ["", "  \n# nothing yet\n"]) {
      const file = tmpConfig(text);
      const r = run(["check", file]);
      expect(r.stdout.trim()).toBe(`${file}:1:1: the file is empty (nothing but whitespace, comments or null): refused, as it would drop every project and key`);
      expect(r.status).toBe(1);
    }
  });

  it("takes the file as --config FILE (or -c) like every other command, and still as a positional", () => {
    const ok = tmpConfig("models: {}\n");
    for (const args of [["--config", ok], ["-c", ok], [ok]]) {
      const r = run(["check", ...args]);
      expect(r.stdout).toContain(`${ok}: ok (`);
      expect(r.status).toBe(0);
    }
    const broken = tmpConfig(BROKEN);
    const bad = run(["check", "--config", broken]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain(`${broken}:6:57:`);
    expect(bad.stdout).not.toContain("cannot read config file");
  });

  it("refuses an unknown option, or two files, instead of reading them as a file name (exit 2)", () => {
    const bogus = run(["check", "--conifg", resolve("gateway.yaml")]);
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toContain("model-gateway check: Unknown option '--conifg'");
    expect(bogus.stdout).not.toContain("cannot read config file");
    const two = run(["check", "--config", resolve("gateway.yaml"), "other.yaml"]);
    expect(two.status).toBe(2);
    expect(two.stderr).toContain("model-gateway check: one config file, as --config FILE or FILE");
  });

  it("says which egress proxy outbound calls use (masked) and refuses one it cannot use", () => {
    const file = tmpConfig("models: {}\n");
    const r = run(["check", file], { HTTPS_PROXY: "http://alice:pr0xy-pass@proxy.corp:3128", NO_PROXY: "localhost,.corp" });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("note: outbound calls go through the egress proxy: https targets http://***@proxy.corp:3128 (HTTPS_PROXY); http targets none: direct; no_proxy localhost,.corp (NO_PROXY)\n");
    expect(r.stderr + r.stdout).not.toContain("pr0xy-pass");
    const socks = run(["check", file], { HTTPS_PROXY: "socks5://proxy.corp:1080" });
    expect(socks.status).toBe(1);
    expect(socks.stdout).toContain("HTTPS_PROXY (in the environment) is a socks5 proxy (socks5://proxy.corp:1080): only http:// and https:// proxies are supported");
    const configured = tmpConfig("server:\n  egress_proxy: { url: \"http://proxy.corp:3128/some/path\" }\n");
    const bad = run(["check", configured]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain(`${configured}:2:24: server.egress_proxy.url has a path or query (http://proxy.corp:3128)`);
  });

  it("a proxy password with a raw % is a located problem, not a crash; egress_proxy: {} ignores such a variable", () => {
    const env = { HTTPS_PROXY: "http://user:50%off@127.0.0.1:24612" };
    const fromEnv = run(["check", tmpConfig("models: {}\n")], env);
    expect(fromEnv.stderr).not.toContain("URIError");
    expect(fromEnv.status).toBe(1);
    expect(fromEnv.stdout).toContain("HTTPS_PROXY (in the environment) has a password with a % that starts no %XX escape (http://***@127.0.0.1:24612)");
    const ignored = run(["check", tmpConfig("server:\n  egress_proxy: {}\n")], env);
    expect(ignored.stderr + ignored.stdout).not.toContain("URIError");
    expect(ignored.status).toBe(0);
    const configured = tmpConfig("server:\n  egress_proxy: { url: \"http://user:100%@127.0.0.1:24612\" }\n");
    const bad = run(["check", configured]);
    expect(bad.stderr).not.toContain("URIError");
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain(`${configured}:2:24: server.egress_proxy.url has a password with a % that starts no %XX escape (http://***@127.0.0.1:24612): write a % in it as %25`);
  });

  it("validates third-party plugin options against the plugin's own schema", () => {
    const file = tmpConfig(`plugins:\n  request-tagger: { module: ${resolve("docs/examples/request-tagger.ts")}, options: { header: Team, value: a } }\npipeline: [auth, request-tagger, router]\n`);
    const r = run(["check", file]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`${file}:2:`);
    expect(r.stdout).toContain("plugin request-tagger options.header: must match pattern");
  });

  it("loads the docs' TypeScript example copied beside a gateway.yaml outside the repository, whatever package.json is around it", () => {
    const example = readFileSync(resolve("docs/examples/request-tagger.ts"), "utf8");
    const config = "store: { kind: memory }\nplugins:\n  request-tagger: { module: ./ex/request-tagger.ts, options: { header: x-team, value: search } }\npipeline: [auth, request-tagger, router]\n";
    // No package.json at all (the temp folder's parents have none), and a deployment's package.json that names no type.
    for (const pkg of [undefined, `{ "name": "deployment" }`]) {
      const file = tmpConfig(config, pkg ? { "package.json": pkg } : {});
      mkdirSync(join(dirname(file), "ex"));
      writeFileSync(join(dirname(file), "ex", "request-tagger.ts"), example);
      const r = run(["check", file]);
      // Before: "Cannot require() ES Module .../ex/request-tagger.ts in a cycle" (tsx took the file for CommonJS).
      expect(r.stdout, pkg ?? "no package.json").toContain(`${file}: ok`);
      expect(r.status).toBe(0);
    }
    // A package that says "type": "commonjs": the file is CommonJS, as it asked, and the problem says what to change.
    const file = tmpConfig(config, { "package.json": `{ "name": "deployment", "type": "commonjs" }` });
    mkdirSync(join(dirname(file), "ex"));
    writeFileSync(join(dirname(file), "ex", "request-tagger.ts"), example);
    const r = run(["check", file]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`it was loaded as CommonJS (a package.json above it says "type": "commonjs"): write it as an ES module, named .mts or .mjs, or set "type": "module" in that package.json`);
  });
});

describe("model-gateway start", () => {
  it("refuses to start on an invalid config, printing the same problems", () => {
    const file = tmpConfig(BROKEN);
    const r = run(["start", "--config", file, "--port", "0"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("refusing to start");
    expect(r.stderr).toContain(`${file}:6:57:`);
  });

  it("refuses a port that is not a port number in one line, exit 2, before loading anything", () => {
    for (const [flag, value] of [["--port", "abc"], ["--port", "99999"], ["--port", "1.5"], ["--port", ""], ["--port", "0x50"], ["--metrics-port", "abc"], ["--metrics-port", "65536"]] as const) {
      const r = run(["start", `${flag}=${value}`, "--no-watch"]);
      expect(r.stderr).toBe(`model-gateway start: ${flag} must be a port number (0 to 65535), got "${value}"\n`);
      expect(r.stdout).not.toContain("listening on");
      expect(r.status).toBe(2);
    }
    const workers = run(["start", "--port", "abc", "--workers", "2"]);
    expect(workers.stderr).toContain(`--port must be a port number (0 to 65535), got "abc"`);
    expect(workers.status).toBe(2);
  });

  it("refuses a port that is already taken instead of moving to another one", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = run(["start", "--port", String(port), "--no-watch"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`refusing to start: port ${port} on 127.0.0.1 is in use (another process has it; pass --port N)`);
      expect(r.stdout).not.toContain("listening on");
    } finally {
      blocker.close();
    }
  });

  it("refuses a host it cannot listen on (no such name, not this machine's address) in one line, exit 1, no stack trace", () => {
    const memory = "store: { kind: memory }\nmetrics: { listener: false }\n";
    const cases = [
      [["--host", "999.1.1.1"], memory, /^refusing to start: cannot listen on 999\.1\.1\.1:0 \(999\.1\.1\.1 does not resolve to an address: check --host or server\.host; (ENOTFOUND|EAI_AGAIN)\)\n$/],
      [[], `server: { host: my-hostt.invalid }\n${memory}`, /^refusing to start: cannot listen on my-hostt\.invalid:0 \(.*; (ENOTFOUND|EAI_AGAIN)\)\n$/],
      // TEST-NET-1: never an address of this machine.
      [["--host", "192.0.2.1"], memory, /^refusing to start: cannot listen on 192\.0\.2\.1:0 \(192\.0\.2\.1 is not an address of this machine: check --host or server\.host \(0\.0\.0\.0 listens on all of them\); EADDRNOTAVAIL\)\n$/],
      // The metrics listener's host likewise; the API listener it had opened is closed again.
      [[], "store: { kind: memory }\nmetrics: { host: 192.0.2.1, port: 0 }\n", /^refusing to start: cannot listen for metrics on 192\.0\.2\.1:0 \(192\.0\.2\.1 is not an address of this machine: check metrics\.host .*; EADDRNOTAVAIL\)\n$/],
    ] as const;
    for (const [args, config, stderr] of cases) {
      const r = run(["start", "--config", tmpConfig(config), "--port", "0", "--no-watch", ...args]);
      expect(r.stderr).toMatch(stderr);
      expect(r.stdout).not.toContain("listening on");
      expect(r.status).toBe(1);
    }
  });

  it("refuses a config whose plugin's setup throws in one line, exit 1, no stack trace; check says it does not run setup", () => {
    const plugin = `export default { name: "licensed", setup() { throw new Error("cannot reach the license server"); }, handle: (ctx, next) => next() };\n`;
    const file = tmpConfig("store: { kind: memory }\nmetrics: { listener: false }\nplugins:\n  licensed: { module: ./licensed.mjs }\npipeline: [auth, licensed, router]\n", { "licensed.mjs": plugin });
    const r = run(["start", "--config", file, "--port", "0", "--no-watch"]);
    // Before: the uncaught error's stack (and its cause's), from the gateway's own files.
    expect(r.stderr).toBe("refusing to start: plugin licensed setup failed: cannot reach the license server\n");
    expect(r.status).toBe(1);
    const checked = run(["check", file]);
    expect(checked.status).toBe(0);
    expect(checked.stderr).toContain("note: check does not run the setup of plugin licensed (start does, and refuses to start if it fails)");
  });

  it("refuses an OTLP endpoint that is not a URL: check and start at its line, from OTEL_EXPORTER_OTLP_ENDPOINT in one line, no stack trace", () => {
    const memory = "store: { kind: memory }\nmetrics: { listener: false }\n";
    const file = tmpConfig(`${memory}telemetry:\n  otlp: { endpoint: "not a url" }\n`);
    const problem = `${file}:4:21: telemetry.otlp.endpoint: must be an absolute http(s) URL, the collector's base URL, such as http://localhost:4318 (it is not an absolute URL)`;
    const checked = run(["check", file]);
    expect(checked.stdout).toBe(`${problem}\n`);
    expect(checked.status).toBe(1);
    // Before: check said ok, then start died with the exporter's "Could not parse user-provided export URL" stack.
    const started = run(["start", "--config", file, "--port", "0", "--no-watch"]);
    expect(started.stderr).toBe(`refusing to start: ${file} has problems\n${problem}\n`);
    expect(started.status).toBe(1);
    const fromEnv = run(["start", "--config", tmpConfig(memory), "--port", "0", "--no-watch"], { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" });
    expect(fromEnv.stderr).toBe("refusing to start: tracing cannot be set up from OTEL_EXPORTER_OTLP_ENDPOINT (an absolute http(s) URL is needed): Configuration: Could not parse user-provided export URL: 'not a url/v1/traces'\n");
    expect(fromEnv.stdout).not.toContain("listening on");
    expect(fromEnv.status).toBe(1);
  });

  it("refuses a spool_dir it cannot write in one line, exit 1, no stack trace", () => {
    const file = tmpConfig("store: { kind: sqlite, path: ./data/gw.db, spool_dir: ./not-a-dir/spool }\nmetrics: { listener: false }\n", { "not-a-dir": "a file where the spool's parent should be" });
    const r = run(["start", "--config", file, "--port", "0", "--no-watch"]);
    // The directory it could not make, and why (a file stands where it goes), as core/store/make-dirs.ts words it.
    expect(r.stderr).toMatch(/^refusing to start: store\.spool_dir \S+not-a-dir\/spool cannot be written \(cannot create the directory \S+not-a-dir: \S+not-a-dir is a file, not a directory \(ENOTDIR\)\).*set store\.require_persistence: false to accept that\n$/);
    expect(r.status).toBe(1);
  });

  it("starts, prints its URL, answers the sandbox key, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, [BIN, "start", "--port", "0", "--no-watch"], { env: { ...process.env, LOG_LEVEL: "silent" } });
    let out = "";
    const url = await new Promise<string>((resolveUrl, reject) => {
      child.stdout.on("data", (d) => {
        out += d;
        const m = out.match(/listening on (http:\/\/\S+)/);
        if (m) resolveUrl(m[1]!);
      });
      child.once("exit", () => reject(new Error(`exited early: ${out}`)));
    });
    try {
      const res = await fetch(`${url}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer mg_test_quickstart_sandbox_key_0001", "content-type": "application/json" },
        body: JSON.stringify({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hello" }], max_tokens: 3 }),
      });
      const body = await res.json();
      expect(res.status).toBe(200);
      expect(body.providerMetadata.gateway.resolvedProvider).toBe("sim");
      expect(body.choices[0].finish_reason).toBe("length");
    } finally {
      child.kill("SIGTERM");
    }
    const code = await new Promise((r) => child.once("exit", (c) => r(c)));
    expect(code).toBe(0);
  });
});

describe("model-gateway usage", () => {
  it("without --config, refuses a directory with no gateway.yaml instead of reading the package's own ledger", () => {
    const empty = mkdtempSync(join(tmpdir(), "mg-cli-usage-"));
    const r = run(["usage"], {}, empty);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("usage: no gateway.yaml here; pass --config FILE\n");
    expect(r.stdout).toBe("");
  });

  it("refuses a reversed --since/--until range naming both, exit 2, instead of printing an all-zero table", () => {
    const file = tmpConfig("store: { kind: sqlite, path: ./ledger.db }\n");
    const r = run(["usage", "--config", file, "--since", "2026-11-01", "--until", "2026-10-01"]);
    expect(r.stderr).toBe("usage: --since 2026-11-01 (2026-11-01T00:00:00.000Z) is not before --until 2026-10-01 (2026-10-01T00:00:00.000Z): the range is empty\n");
    expect(r.stdout).toBe("");
    expect(r.status).toBe(2);
  });

  it("without --config, reads ./gateway.yaml when there is one; a store.path naming no file is an error naming it, not an all-zero table", () => {
    const file = tmpConfig("store: { kind: sqlite, path: ./ledger.db }\n");
    const r = run(["usage", "--json"], {}, dirname(file));
    // Found there (not the package's default): the file it names, and where that name came from.
    expect(r.stderr).toBe(`usage: no SQLite file at ${join(dirname(file), "ledger.db")} (store.path "./ledger.db" in ${file}, relative to its directory): ` +
      "a gateway makes it when it first starts on this config; if one is running, it serves another file\n");
    expect(r.stdout).toBe("");
    expect(r.status).toBe(1);
    // Only read: usage makes no ledger file where there is none.
    expect(existsSync(join(dirname(file), "ledger.db"))).toBe(false);
    // The default path, when store.path is not set.
    const bare = tmpConfig("store: { kind: sqlite }\n");
    const d = run(["usage", "--config", bare]);
    expect(d.stderr).toBe(`usage: no SQLite file at ${join(dirname(bare), "data", "gateway.db")} (store.path not set in ${bare}: the default ./data/gateway.db, relative to its directory): ` +
      "a gateway makes it when it first starts on this config; if one is running, it serves another file\n");
    expect(d.status).toBe(1);
  });
});

describe("model-gateway keys new", () => {
  it("prints a fresh key once with the YAML line holding only its sha256", () => {
    const r = run(["keys", "new", "--project", "acme", "--sandbox", "--expires", "2099-01-01"]);
    expect(r.status).toBe(0);
    const key = r.stdout.split("\n")[0]!;
    expect(key).toMatch(/^mg_test_[A-Za-z0-9_-]{32}$/);
    const sha = createHash("sha256").update(key).digest("hex");
    expect(r.stdout).toContain(`sha256: "${sha}", expires_at: "2099-01-01T00:00:00Z" }`);
    expect(r.stdout.split(key).length).toBe(2); // shown exactly once
    const live = run(["keys", "new", "--project", "acme"]).stdout.split("\n")[0]!;
    expect(live).toMatch(/^mg_live_/);
  });

  it("refuses an --expires in the past (a key expired on creation) in every mode, leaving gateway.yaml as it was", () => {
    const text = "projects:\n  acme:\n    keys: []\n";
    const file = tmpConfig(text);
    const modes = [[], ["--config", file], ["--url", "http://127.0.0.1:1", "--admin-key", "mg_admin_unused"]];
    for (const mode of modes) {
      const r = run(["keys", "new", "--project", "acme", "--expires", "2020-01-01", ...mode]);
      expect(r.stderr).toBe("keys new: --expires 2020-01-01 is in the past (2020-01-01T00:00:00Z): the key would be expired on creation\n");
      expect(r.stdout).toBe("");
      expect(r.status).toBe(2); // a bad option value: a usage error
    }
    const admin = run(["keys", "new", "--admin", "--scope", "read", "--expires", new Date(Date.now() - 60_000).toISOString(), "--config", file]);
    expect(admin.stderr).toMatch(/^keys new: --expires \S+ is in the past/);
    expect(admin.status).toBe(2);
    expect(readFileSync(file, "utf8")).toBe(text);
  });
});

describe("model-gateway plugin new", () => {
  it("refuses a built-in plugin's name, which a gateway would never load, and writes nothing", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "mg-cli-plugin-")), "pkg");
    const r = run(["plugin", "new", "@acme/rate-limit", "--dir", dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`plugin new: "rate-limit" is the name of a built-in plugin, and a gateway refuses to load another by that name; choose another (e.g. rate-limit-plus)\n`);
    expect(existsSync(dir)).toBe(false);
  });
});
