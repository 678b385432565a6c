// Start a real gateway (real HTTP server, real config file) for end-to-end tests.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { startGateway, type RunningGateway } from "../../core/server.ts";
import { createLogger } from "../../core/log.ts";
import { sha256Hex } from "../../core/keys/keys.ts";

export interface TestGateway extends RunningGateway {
  /** `${url}/api/v1`, what SDK clients take as baseURL. */
  baseURL: string;
  configFile: string;
  dir: string;
}

/** Deterministic test keys: `key("acme")` is a live key, `key("acme", true)` a sandbox one. */
export function testKey(name: string, sandbox = false): string {
  return `mg_${sandbox ? "test" : "live"}_${name.padEnd(16, "0")}`;
}

export const keyEntry = (id: string, key: string, extra: Record<string, unknown> = {}) => ({ id, sha256: sha256Hex(key), ...extra });

export interface TestGatewayOptions {
  env?: Record<string, string>;
  watch?: boolean;
  sighup?: boolean;
  /** Extra files written next to gateway.yaml (plugin modules, included catalogs). */
  files?: Record<string, string>;
}

export async function startTestGateway(config: Record<string, unknown> | string, opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), "mg-test-"));
  const configFile = join(dir, "gateway.yaml");
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(dir, name), text);
  writeFileSync(configFile, testConfigText(config));
  const gw = await startGateway({
    configFile,
    port: 0,
    host: "127.0.0.1",
    metricsPort: 0, // each test gateway its own metrics listener: tests run side by side
    logger: createLogger((process.env.TEST_LOG_LEVEL as never) ?? "silent"),
    watch: opts.watch ?? false,
    sighup: opts.sighup ?? false,
    env: { ...process.env, ...opts.env },
  });
  return { ...gw, baseURL: `${gw.url}/api/v1`, configFile, dir };
}

/**
 * gateway.yaml's text for a test config. An object without store: runs on the memory store, as these tests always
 * have (each its own, nothing on disk); a gateway.yaml without store: is on the SQLite file beside it. YAML text is
 * written as given.
 */
export function testConfigText(config: Record<string, unknown> | string): string {
  if (typeof config === "string") return config;
  return YAML.stringify("store" in config ? config : { store: { kind: "memory" }, ...config });
}

/**
 * Rewrite a running test gateway's config as startTestGateway wrote it: an object without store: keeps the memory
 * store it started on, so a reload changes only what the test changed (not store.kind, a restart-only setting).
 */
export function writeTestConfig(gw: Pick<TestGateway, "configFile">, config: Record<string, unknown> | string): void {
  writeFileSync(gw.configFile, testConfigText(config));
}

/** POST JSON with fetch and return status, headers and parsed body (or text for streams). */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/**
 * The ledger record of a request, once written: a record is written after the answer (a cut stream's once the
 * gateway notices its client left), in the next SQLite group commit, which waits for the fsync in progress (slow on
 * a loaded machine); up to 5 s.
 */
export async function ledgerRecordOf(gw: Pick<TestGateway, "gateway">, requestId: string | null) {
  const until = Date.now() + 5000;
  for (;;) {
    const e = (await gw.gateway.store.ledger({})).find((x) => x.requestId === requestId);
    if (e) return e;
    if (Date.now() > until) throw new Error(`no ledger record for ${requestId}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
