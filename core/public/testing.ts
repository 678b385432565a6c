// `model-gateway/testing`: a real gateway in the test's own process for a plugin package's tests, so a plugin author
// checks the plugin the way a deployment runs it (gateway.yaml with `plugins:` and `pipeline:`, the options checked
// against its schema, the built-in plugins around it) without writing a config or managing a port. Upstream is the
// built-in simulator, whose reply quotes the last user message: what the upstream received is visible in the answer.
// Its types are its own (no server types), so the entry's declarations stay small and self-contained.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { builtins } from "../builtins.ts";
import { newApiKey, sha256Hex } from "../keys/keys.ts";
import { createLogger } from "../log.ts";
import { pluginModulePath } from "../config/resolve.ts";
import { startGateway } from "../server.ts";

/** A third-party plugin as declared under `plugins:` in gateway.yaml. */
export interface TestPlugin {
  /** A file (path, or a file: URL such as `new URL("../src/index.js", import.meta.url)`) or an installed package name. */
  module: string | URL;
  options?: unknown;
}

export interface TestGatewayOptions {
  /** The plugins to load, by the name each one's definePlugin() gives. */
  plugins?: Record<string, TestPlugin>;
  /** The pipeline. Default: `auth`, then `plugins` in the order given, then the rest of the built-in default order. */
  pipeline?: string[];
  /** More gateway.yaml, merged over the defaults key by key at the top level (models, projects, server, ...). */
  config?: Record<string, unknown>;
  /** Where the gateway logs (stderr). Default "silent"; "error" shows what a throwing plugin threw. */
  logLevel?: "debug" | "info" | "warn" | "error" | "silent";
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when the body is not JSON (see `text`). */
  body: any;
  text: string;
}

export interface TestGateway {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** `${url}/api/v1`, what an SDK takes as its base URL. */
  baseURL: string;
  /** A live API key of the project `test`. */
  key: string;
  /** A simulator model (`sim/echo`): its reply quotes the last user message it received. */
  model: string;
  /** The gateway.yaml written for this gateway. */
  configFile: string;
  /** POST a JSON body to `${baseURL}${path}` with the key. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** Stop the gateway and remove its config folder. */
  close(): Promise<void>;
}

const TEST_MODEL = "sim/echo";

/** The gateway.yaml (as an object) a test gateway runs: a simulator model, one project and key, the plugins. */
function testConfig(opts: TestGatewayOptions, key: string, cwd = process.cwd()): Record<string, unknown> {
  const plugins = Object.fromEntries(Object.entries(opts.plugins ?? {}).map(([name, p]) => [name, { module: modulePath(p.module, cwd), options: p.options }]));
  const rest = builtins.defaultPipeline().filter((n) => n !== "auth");
  return {
    store: { kind: "memory" },
    models: { [TEST_MODEL]: { endpoints: [{ provider: "sim", model: "echo" }] } },
    projects: { test: { keys: [{ id: "test", sha256: sha256Hex(key) }] } },
    plugins,
    pipeline: opts.pipeline ?? ["auth", ...Object.keys(plugins), ...rest],
    ...opts.config,
  };
}

/** An absolute path: gateway.yaml is written in a temp folder, so relative paths and packages resolve from `cwd`. */
function modulePath(module: string | URL, cwd: string): string {
  if (module instanceof URL || module.startsWith("file:")) return fileURLToPath(module);
  if (module.startsWith(".") || isAbsolute(module)) return resolve(cwd, module);
  return pluginModulePath(module, cwd);
}

/** Start a gateway on a free loopback port with these plugins. Rejects with the config's problems when it cannot. */
export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const key = newApiKey(false);
  const dir = mkdtempSync(join(tmpdir(), "mg-plugin-test-"));
  const configFile = join(dir, "gateway.yaml");
  try {
    // JSON is YAML: no YAML writer needed.
    writeFileSync(configFile, JSON.stringify(testConfig(opts, key), null, 2));
    const gw = await startGateway({ configFile, port: 0, host: "127.0.0.1", logger: createLogger(opts.logLevel ?? "silent"), watch: false, sighup: false });
    const baseURL = `${gw.url}/api/v1`;
    return {
      url: gw.url,
      baseURL,
      key,
      model: TEST_MODEL,
      configFile,
      async post(path, body, headers = {}) {
        const res = await fetch(`${baseURL}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        return { status: res.status, headers: res.headers, body: parsed, text };
      },
      async close() {
        await gw.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
