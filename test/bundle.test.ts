// The bin runs the gateway bundled into dist/ by bin/build.mjs: the build helper's staleness and atomicity on a tiny
// temp tree, the bin on a temp copy of this checkout (so no real source's mtime is touched), and the shipped bin on
// paths and plugins that moved with the bundle.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import YAML from "yaml";
import { keyEntry, postJson, testKey } from "./helpers/gateway.ts";
import { startChildGateway, type ChildGateway } from "./helpers/child-gateway.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUILD = pathToFileURL(join(ROOT, "bin/build.mjs")).href;
type Built = Record<string, string>;
const { ensureBuilt } = (await import(BUILD)) as { ensureBuilt(spec: object, root: string, opts?: { force?: boolean; here?: boolean; clean?: boolean }): Promise<Built> };

const SPEC = { outdir: "dist", entries: { cli: "core/a.ts" }, watch: ["core"] };
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A package with two TypeScript modules: core/a.ts's main() returns core/b.ts's string. */
function tinyTree(): string {
  const root = tempDir("mg-build-");
  writeFileSync(join(root, "package.json"), JSON.stringify({ type: "module" }));
  mkdirSync(join(root, "core"));
  writeFileSync(join(root, "core/a.ts"), `import { b } from "./b.ts";\nexport const main = (): string => b;\n`);
  writeFileSync(join(root, "core/b.ts"), `export const b: string = "one";\n`);
  return root;
}
const mainOf = async (built: Built) => ((await import(pathToFileURL(built.cli!).href)) as { main(): string }).main();
const manifestMtime = (root: string) => statSync(join(root, "dist/build.json")).mtimeMs;
const old = new Date("2020-01-01T00:00:00Z");

describe("bin/build.mjs ensureBuilt", () => {
  it("builds when there is no bundle, not again while it is fresh, again when a file or directory is newer", async () => {
    const root = tinyTree();
    const first = await ensureBuilt(SPEC, root);
    expect(first.cli).toMatch(/dist\/cli-\w+\.mjs$/);
    expect(await mainOf(first)).toBe("one");
    const builtAt = manifestMtime(root);

    expect(await ensureBuilt(SPEC, root)).toEqual(first);
    expect(manifestMtime(root)).toBe(builtAt);

    writeFileSync(join(root, "core/b.ts"), `export const b: string = "two";\n`);
    utimesSync(join(root, "core/b.ts"), new Date(), new Date(Date.now() + 2000));
    const second = await ensureBuilt(SPEC, root);
    expect(second.cli).not.toBe(first.cli); // content-hashed name
    expect(await mainOf(second)).toBe("two");

    // A file added with an old mtime still counts: its directory's mtime changed.
    const again = manifestMtime(root);
    writeFileSync(join(root, "core/c.ts"), "export {};\n");
    utimesSync(join(root, "core/c.ts"), old, old);
    utimesSync(join(root, "core"), new Date(), new Date(Date.now() + 4000));
    await ensureBuilt(SPEC, root);
    expect(manifestMtime(root)).toBeGreaterThan(again);
  });

  it("builds again when the bundle's stamp is dated after now (a clock set back): later edits are not hidden until then", async () => {
    const root = tinyTree();
    await ensureBuilt(SPEC, root);
    const ahead = new Date(Date.now() + 3 * 86_400_000);
    utimesSync(join(root, "dist/build.json"), ahead, ahead);
    writeFileSync(join(root, "core/b.ts"), `export const b: string = "edited";\n`);
    const rebuilt = await ensureBuilt(SPEC, root);
    expect(await mainOf(rebuilt)).toBe("edited");
    expect(manifestMtime(root)).toBeLessThan(ahead.getTime());
  });

  it("a failed build throws and leaves the last good bundle named", async () => {
    const root = tinyTree();
    const good = await ensureBuilt(SPEC, root);
    writeFileSync(join(root, "core/b.ts"), `export const b: string = ;\n`);
    utimesSync(join(root, "core/b.ts"), new Date(), new Date(Date.now() + 2000));
    await expect(ensureBuilt(SPEC, root)).rejects.toThrow();
    expect(JSON.parse(readFileSync(join(root, "dist/build.json"), "utf8")).entries.cli).toBe(good.cli!.split("/").pop());
    expect(await mainOf(good)).toBe("one");
  });

  it("throws when the output directory cannot be written", async () => {
    const root = tinyTree();
    writeFileSync(join(root, "blocked"), "a file, not a directory");
    await expect(ensureBuilt({ ...SPEC, outdir: "blocked/dist" }, root)).rejects.toThrow(/ENOTDIR|EEXIST/);
  });

  it("writes ASCII-only JavaScript (V8 keeps a source with one em dash as two bytes per character), strings intact", async () => {
    const root = tinyTree();
    // esbuild escapes non-ASCII in code and keeps JSDoc comments as written.
    writeFileSync(join(root, "core/b.ts"), `export class B {\n  /** The text \u2014 kept. */\n  s: string = "caf\u00e9 \u2014 \u{1F600}";\n}\nexport const b: string = new B().s;\n`);
    const built = await ensureBuilt(SPEC, root);
    const code = readFileSync(built.cli!, "utf8");
    expect(code).toContain("/** The text ? kept. */");
    expect(code).toMatch(/^[\x00-\x7f]*$/);
    expect(await mainOf(built)).toBe("caf\u00e9 \u2014 \u{1F600}");
  });

  it("gives a public entry a stable file re-exporting it; a clean build (npm pack) leaves only its own outputs", async () => {
    const root = tinyTree();
    const spec = { ...SPEC, public: ["cli"] };
    const first = await ensureBuilt(spec, root, { here: true });
    expect(readFileSync(join(root, "dist/cli.mjs"), "utf8")).toBe(`export * from "./${basename(first.cli!)}";\n`);
    writeFileSync(join(root, "core/b.ts"), `export const b: string = "two";\n`);
    utimesSync(join(root, "core/b.ts"), new Date(), new Date(Date.now() + 2000));
    const second = await ensureBuilt(spec, root, { here: true, clean: true });
    expect(existsSync(first.cli!)).toBe(false);
    expect(readdirSync(join(root, "dist")).sort()).toEqual(["build.json", "cli.mjs", basename(second.cli!), `${basename(second.cli!)}.map`].sort());
    expect(((await import(pathToFileURL(join(root, "dist/cli.mjs")).href)) as { main(): string }).main()).toBe("two");
    expect(JSON.parse(readFileSync(join(root, "dist/build.json"), "utf8")).release).toBe(true);
  });

  it("uses a release bundle that npm installed as is, whatever the mtimes; a checkout's is rebuilt when a source is newer", async () => {
    const installed = join(tempDir("mg-build-installed-"), "node_modules", "gw");
    cpSync(tinyTree(), installed, { recursive: true });
    const checkout = tinyTree();
    for (const root of [installed, checkout]) {
      await ensureBuilt(SPEC, root, { here: true, clean: true });
      // npm extracts every file at install time: sources may be newer than dist/build.json.
      utimesSync(join(root, "core/b.ts"), new Date(), new Date(Date.now() + 2000));
    }
    const before = manifestMtime(installed);
    await ensureBuilt(SPEC, installed);
    expect(manifestMtime(installed)).toBe(before);
    const checkoutBefore = manifestMtime(checkout);
    await ensureBuilt(SPEC, checkout);
    expect(manifestMtime(checkout)).toBeGreaterThan(checkoutBefore);
  });

  it("processes building at once leave one valid bundle and no temp files", async () => {
    const root = tinyTree();
    const code = `const m = await import(${JSON.stringify(BUILD)}); await m.ensureBuilt(${JSON.stringify(SPEC)}, ${JSON.stringify(root)}, { force: true });`;
    const exits = await Promise.all(Array.from({ length: 3 }, () => new Promise<number | null>((resolve) => {
      spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: "inherit" }).once("exit", resolve);
    })));
    expect(exits).toEqual([0, 0, 0]);
    const built = await ensureBuilt(SPEC, root);
    expect(await mainOf(built)).toBe("one");
    expect(readdirSync(join(root, "dist")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});

describe("the bin on a copy of this checkout", () => {
  let copy: string;
  const bin = (args: string[]) => spawnSync(process.execPath, [join(copy, "bin/model-gateway.mjs"), ...args], { cwd: copy, encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 });

  beforeAll(() => {
    copy = tempDir("mg-bin-");
    for (const p of ["bin", "core", "plugins", "providers", "schemas", "catalog", "package.json", "tsconfig.json", "gateway.yaml"]) {
      cpSync(join(ROOT, p), join(copy, p), { recursive: true, filter: (src) => !src.includes(".test.") });
    }
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  });

  it("runs the bundle in dist/, not the sources, and rebuilds once a source is newer", () => {
    const first = bin(["--help"]);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain("one HTTP gateway in front of many model providers");
    expect(first.stderr).toBe("");
    const cli = join(copy, "dist", JSON.parse(readFileSync(join(copy, "dist/build.json"), "utf8")).entries.cli);
    expect(readFileSync(cli, "utf8")).not.toMatch(/__name\(/); // no keepNames helper on every closure

    // Edited but dated before the build: the bin keeps running what dist/ holds.
    const source = join(copy, "core/cli.ts");
    writeFileSync(source, readFileSync(source, "utf8").replace("one HTTP gateway in front of", "PATCHED gateway before"));
    utimesSync(source, old, old);
    expect(bin(["--help"]).stdout).toContain("one HTTP gateway in front of many model providers");

    utimesSync(source, new Date(), new Date(Date.now() + 2000));
    const rebuilt = bin(["--help"]);
    expect(rebuilt.stdout).toContain("PATCHED gateway before many model providers");
    expect(rebuilt.stderr).toBe("");
  });

  it("falls back to the sources through tsx, with one warning line, when dist/ cannot be written", () => {
    rmSync(join(copy, "dist"), { recursive: true, force: true });
    writeFileSync(join(copy, "dist"), "read-only install stand-in");
    const r = bin(["check", join(copy, "gateway.yaml")]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(": ok (");
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("model-gateway:"));
    expect(warnings).toEqual([expect.stringMatching(/^model-gateway: no bundle in .*dist \(.*\); running the sources through tsx$/)]);

    // A plugin package symlinked from a folder with no model-gateway of its own gets the sources' entry.
    const deploy = tempDir("mg-fallback-deploy-"), plugin = tempDir("mg-fallback-plugin-");
    writeFileSync(join(plugin, "package.json"), JSON.stringify({ name: "fb-plugin", type: "module", exports: { ".": { import: "./index.js" } } }));
    writeFileSync(join(plugin, "index.js"), `import { definePlugin } from "model-gateway/plugin";\nexport default definePlugin({ name: "fb-plugin", handle: (ctx, next) => next() });\n`);
    mkdirSync(join(deploy, "node_modules"));
    symlinkSync(plugin, join(deploy, "node_modules", "fb-plugin"), "dir");
    writeFileSync(join(deploy, "gateway.yaml"), YAML.stringify({ plugins: { "fb-plugin": { module: "fb-plugin" } }, pipeline: ["auth", "fb-plugin", "router"] }));
    const linked = spawnSync(process.execPath, [join(copy, "bin/model-gateway.mjs"), "check", "gateway.yaml"], { cwd: deploy, encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 });
    expect(linked.status, linked.stdout + linked.stderr).toBe(0);
    expect(linked.stdout).toContain("pipeline: auth → fb-plugin → router");
  }, 60_000);
});

describe("the shipped bin, bundled", () => {
  const KEY = testKey("bundle", true);
  let gw: ChildGateway;

  beforeAll(async () => {
    const dir = tempDir("mg-bundle-");
    // A TypeScript plugin importing model-gateway/plugin, loaded through the bin after the bundle.
    writeFileSync(join(dir, "gateway.yaml"), YAML.stringify({
      store: { kind: "memory" },
      models: { "openai/gpt-4o-mini": { endpoints: [{ provider: "sim", model: "m" }] }, "openai/gpt-4o": { endpoints: [{ provider: "sim", model: "m" }] } },
      projects: { p: { keys: [keyEntry("k", KEY)] } },
      plugins: { "request-tagger": { module: join(ROOT, "docs/examples/request-tagger.ts"), options: { header: "x-team", value: "search", block: ["openai/gpt-4o"] } } },
      pipeline: ["auth", "request-tagger", "router"],
    }));
    gw = await startChildGateway(join(dir, "gateway.yaml"), { LOG_LEVEL: "silent" });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it("loads a TypeScript plugin whose GatewayError is the gateway's own class", async () => {
    const chat = (model: string) => postJson(`${gw.baseURL}/chat/completions`, { model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }, { authorization: `Bearer ${KEY}` });
    const ok = await chat("openai/gpt-4o-mini");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-team")).toBe("search");
    const blocked = await chat("openai/gpt-4o");
    expect(blocked.status).toBe(403);
    expect(blocked.json.error).toMatchObject({ code: "MODEL_NOT_ALLOWED" });
  });

  it("serves /api/openapi.json built from schemas/ (found from dist/)", async () => {
    const res = await fetch(`${gw.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(10);
    expect(Object.keys(doc.paths)).toContain("/v1/chat/completions"); // servers: [{ url: "/api" }]
  });

  it("loads none of the gateway before a command needs it: the cli entry's static imports hold no server or config loader", () => {
    const dist = join(ROOT, "dist");
    const statics = (file: string): string[] => [...readFileSync(join(dist, file), "utf8").matchAll(/^(?:} from|import .* from|import) "\.\/(chunk-\w+\.mjs)";$/gm)].map((m) => m[1]!);
    const entry = JSON.parse(readFileSync(join(dist, "build.json"), "utf8")).entries.cli as string;
    const seen = new Set<string>([entry]);
    for (const f of seen) for (const c of statics(f)) seen.add(c);
    const eager = [...seen].map((f) => readFileSync(join(dist, f), "utf8")).join("\n");
    expect(eager).toContain("function runPrimary("); // what a --workers primary runs is there
    expect(eager).not.toContain("function startGateway(");
    expect(eager).not.toContain("function resolveConfig(");
    const all = readdirSync(dist).filter((f) => f.endsWith(".mjs")).map((f) => readFileSync(join(dist, f), "utf8"));
    expect(all.some((t) => t.includes("function startGateway("))).toBe(true); // in a lazily imported chunk
  });

  it("a started gateway loads the OpenTelemetry, AWS and JOSE packages only when its config needs them", () => {
    const dist = join(ROOT, "dist");
    const text = (f: string) => readFileSync(join(dist, f), "utf8");
    const specifiers = (f: string, re: RegExp) => [...text(f).matchAll(re)].map((m) => m[1]!);
    const staticImports = (f: string) => specifiers(f, /^(?:} from|import .* from|import) "([^"]+)";$/gm);
    const entry = JSON.parse(text("build.json")).entries.cli as string;
    // The chunk with startGateway is imported lazily by the cli; everything it imports statically loads with it.
    const reachable = new Set<string>([entry]);
    for (const f of reachable) for (const s of [...staticImports(f), ...specifiers(f, /import\("([^"]+)"\)/g)]) if (s.startsWith("./")) reachable.add(s.slice(2));
    const server = [...reachable].find((f) => text(f).includes("function startGateway("))!;
    expect(server).toBeDefined();
    const eager = new Set<string>([server]);
    const packages = new Set<string>();
    for (const f of eager) for (const s of staticImports(f)) s.startsWith("./") ? eager.add(s.slice(2)) : packages.add(s);
    const optional = /^(@opentelemetry\/|@smithy\/|@aws-crypto\/|jose$)/;
    expect([...packages].filter((p) => optional.test(p))).toEqual([]);
    expect(packages).toContain("undici"); // the walk does see package imports
    // ...and each is still imported, by a chunk loaded on demand.
    const lazily = new Set([...reachable].flatMap((f) => [...staticImports(f), ...specifiers(f, /import\("([^"]+)"\)/g)]).filter((p) => optional.test(p)));
    expect([...lazily].sort()).toEqual(expect.arrayContaining(["@opentelemetry/api", "@smithy/eventstream-codec", "@smithy/signature-v4", "jose"]));
  });

  it("finds the default gateway.yaml beside package.json from any working directory", () => {
    const cwd = tempDir("mg-cwd-");
    const r = spawnSync(process.execPath, [join(ROOT, "bin/model-gateway.mjs"), "check"], { cwd, encoding: "utf8", env: { ...process.env, LOG_LEVEL: "silent" }, timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${join(ROOT, "gateway.yaml")}: ok (`);
    expect(existsSync(join(ROOT, "dist/build.json"))).toBe(true);
  });
});
